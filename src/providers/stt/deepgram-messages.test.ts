import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isProviderError } from '../provider-error.js';
import { closeCodeError, deepgramListenUrl, parseDeepgramMessage } from './deepgram-stt.js';

const results = {
  type: 'Results',
  channel_index: [0, 1],
  duration: 1.25,
  start: 0.5,
  is_final: true,
  speech_final: true,
  channel: {
    alternatives: [
      {
        transcript: 'yes please',
        confidence: 0.91,
        words: [
          { word: 'yes', start: 0.52, end: 0.8, confidence: 0.95, punctuated_word: 'Yes' },
          { word: 'please', start: 0.9, end: 1.7, confidence: 0.88 },
        ],
      },
    ],
  },
};

describe('deepgram messages', () => {
  test('Results: text, times in ms, confidence, words (punctuated when given)', () => {
    assert.deepEqual(parseDeepgramMessage(JSON.stringify(results)), {
      type: 'Results',
      isFinal: true,
      speechFinal: true,
      text: 'yes please',
      startMs: 500,
      endMs: 1750,
      confidence: 0.91,
      words: [
        { word: 'Yes', startMs: 520, endMs: 800, confidence: 0.95 },
        { word: 'please', startMs: 900, endMs: 1700, confidence: 0.88 },
      ],
    });
  });

  test('UtteranceEnd, Metadata, Error; other types are ignored', () => {
    assert.deepEqual(parseDeepgramMessage('{"type":"UtteranceEnd","channel":[0,1],"last_word_end":2.4}'), {
      type: 'UtteranceEnd',
      lastWordEndMs: 2400,
    });
    assert.deepEqual(parseDeepgramMessage('{"type":"Metadata","request_id":"r1","duration":3}'), {
      type: 'Metadata',
      requestId: 'r1',
    });
    assert.deepEqual(parseDeepgramMessage('{"type":"Error","description":"bad audio"}'), {
      type: 'Error',
      message: 'bad audio',
    });
    assert.deepEqual(parseDeepgramMessage('{"type":"SpeechStarted","timestamp":1}'), { type: 'other' });
  });

  test('anything outside the protocol is a bad_response naming what is missing', () => {
    for (const [text, why] of [
      ['not json', /not JSON/],
      ['[1]', /without a type/],
      ['{"type":"Results","start":0,"duration":1}', /alternatives\[0\]\.transcript/],
      [JSON.stringify({ ...results, start: 'soon' }), /start and duration/],
      ['{"type":"UtteranceEnd"}', /last_word_end/],
    ] as const) {
      assert.throws(
        () => parseDeepgramMessage(text),
        (error) => isProviderError(error, 'bad_response') && why.test(error.message),
        text,
      );
    }
  });

  test('the listen URL carries the format, interim results, endpointing and model', () => {
    const url = deepgramListenUrl('wss://api.deepgram.com/', {
      model: 'nova-2-phonecall',
      encoding: 'mulaw',
      sampleRate: 8000,
      endpointingMs: 300,
      language: 'en-US',
      utteranceEndMs: 1000,
    });
    assert.equal(
      url,
      'wss://api.deepgram.com/v1/listen?encoding=mulaw&sample_rate=8000&channels=1&interim_results=true&endpointing=300&model=nova-2-phonecall&language=en-US&utterance_end_ms=1000',
    );
  });

  test('close codes: lost, refused audio, a failure upstream', () => {
    assert.equal(closeCodeError(1006, '').code, 'network');
    assert.match(closeCodeError(1006, '').message, /connection was lost/);
    const refused = closeCodeError(1008, 'DATA-0000');
    assert.equal(refused.code, 'invalid_request');
    assert.match(refused.message, /code 1008: DATA-0000/);
    assert.equal(closeCodeError(1011, 'NET-0001').code, 'upstream_error');
  });
});

/**
 * G.711 μ-law (PCMU, payload type 0) and A-law (PCMA, payload type 8): 8 kHz telephone audio, one byte a
 * sample. The codec itself is `alawmulaw`; this file adds the payload-type names and the step to and
 * from the rates the speech engines produce, through the band-limited resampler of src/lib/wav.ts.
 */
import alawmulaw from 'alawmulaw';
import { resample } from '../../../lib/wav.js';

export const G711_SAMPLE_RATE = 8000;

export type G711Codec = 'pcmu' | 'pcma';

/** The static RTP payload types (and the names SDP's a=rtpmap uses). */
export const G711_PAYLOAD_TYPES = { pcmu: 0, pcma: 8 } as const satisfies Record<G711Codec, number>;

export function encodeMulaw(pcm: Int16Array): Uint8Array {
  return alawmulaw.mulaw.encode(pcm);
}

export function decodeMulaw(bytes: Uint8Array): Int16Array {
  return alawmulaw.mulaw.decode(bytes);
}

export function encodeAlaw(pcm: Int16Array): Uint8Array {
  return alawmulaw.alaw.encode(pcm);
}

export function decodeAlaw(bytes: Uint8Array): Int16Array {
  return alawmulaw.alaw.decode(bytes);
}

export function encodeG711(codec: G711Codec, pcm: Int16Array): Uint8Array {
  return codec === 'pcmu' ? encodeMulaw(pcm) : encodeAlaw(pcm);
}

export function decodeG711(codec: G711Codec, bytes: Uint8Array): Int16Array {
  return codec === 'pcmu' ? decodeMulaw(bytes) : decodeAlaw(bytes);
}

/** Mono PCM at any rate (espeak-ng's 22,050 Hz, OpenAI's 24 kHz) to G.711 bytes at 8 kHz. */
export function pcmToG711(codec: G711Codec, pcm: Int16Array, sampleRate: number): Uint8Array {
  return encodeG711(codec, sampleRate === G711_SAMPLE_RATE ? pcm : resample(pcm, sampleRate, G711_SAMPLE_RATE));
}

/** G.711 bytes to mono PCM at the rate asked for (8 kHz by default, 16 kHz for a speech recognizer). */
export function g711ToPcm(codec: G711Codec, bytes: Uint8Array, sampleRate = G711_SAMPLE_RATE): Int16Array {
  const pcm = decodeG711(codec, bytes);
  return sampleRate === G711_SAMPLE_RATE ? pcm : resample(pcm, G711_SAMPLE_RATE, sampleRate);
}

/**
 * Streaming speech to text. `deepgram`: Deepgram's live WebSocket API or any server that speaks it. The call
 * engine does not use it yet.
 */
export * from './stt-port.js';
export {
  createDeepgramStt,
  DEEPGRAM_DEFAULTS,
  type DeepgramSttOptions,
} from './deepgram-stt.js';
export { createSilenceEndpointer, isVoiced, VOICED_RMS } from './silence-endpointer.js';

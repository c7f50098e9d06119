/**
 * Voice provider: the port (voice-port.ts) and its built-in adapter, `sim`, which simulates the network, the person
 * (or answering machine) at the other end, and the agent capacity of a worker.
 */
export type * from './voice-port.js';
export {
  createSimVoiceProvider,
  simOutcomeFor,
  SIM_OUTCOMES,
  SIM_PERSONAS,
  type SimOutcome,
  type SimPersona,
  type SimVoiceOptions,
} from './sim-voice.js';
export type { SimAgentCapacityOptions } from './sim-agent-capacity.js';

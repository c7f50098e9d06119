/**
 * The calls service: one object built from the module's parts, each serving one audience. The API of an account
 * (calls.api.ts), the engine's jobs (calls.engine.ts), a campaign's dialer (calls.dialer.ts), the platform tools
 * (calls.platform.ts), the voice provider's callbacks (calls.provider.ts) and the LLM proxy (calls.llm.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { OwnershipCheck } from '../../db/ownership.js';
import type { TxHandle } from '../../db/repo.js';
import type { DatabaseKind } from '../../db/staging.js';
import type { Broadcast } from '../../lib/broadcast.js';
import type { Clock } from '../../lib/clock.js';
import type { ObjectStorage } from '../../providers/storage/index.js';
import type { TtsProvider } from '../../providers/tts/index.js';
import type { VoiceProvider } from '../../providers/voice/index.js';
import { createCallAnalysis } from './calls.analysis.js';
import { createCallsApi } from './calls.api.js';
import { createCallAssets } from './calls.assets.js';
import { createCallsDialer } from './calls.dialer.js';
import { createCallControl, createCallsEngine } from './calls.engine.js';
import { createCallLifecycle } from './calls.lifecycle.js';
import { createCallLlm } from './calls.llm.js';
import { createCallsPlatform } from './calls.platform.js';
import type {
  AgentLlmForCalls,
  AgentModelForCalls,
  AgentsForCalls,
  ContactsForCalls,
  DispositionsForCalls,
  DncForCalls,
  NumbersForCalls,
  PricingForCalls,
} from './calls.ports.js';
import { createCallsProviderCallbacks } from './calls.provider.js';
import type { CallsRepo } from './calls.repo.js';
import { createCallRunner } from './calls.runner.js';

export interface CallsDeps {
  repo: CallsRepo;
  clock: Clock;
  config: Config;
  databaseKind: DatabaseKind;
  owned: OwnershipCheck;
  agents: AgentsForCalls;
  contacts: ContactsForCalls;
  dnc: DncForCalls;
  numbers: NumbersForCalls;
  dispositions: DispositionsForCalls;
  pricing: PricingForCalls;
  voice: VoiceProvider;
  agentLlm: AgentLlmForCalls;
  agentModel: AgentModelForCalls;
  tts: TtsProvider;
  objects: ObjectStorage;
  broadcast: Broadcast;
  log: Logger;
}

export function createCallsService(deps: CallsDeps) {
  const { broadcast } = deps;
  const config = deps.config.calls;
  const assets = createCallAssets({ ...deps, config });
  const { publicBaseUrl, host, port } = deps.config;
  const publicOrigin = publicBaseUrl?.replace(/\/+$/, '') ?? `http://${host}:${port}`;
  const recordingUrl = async (callId: string, within: TxHandle) =>
    (await assets.signedUrl(callId, 'recording', publicOrigin, within)).url;
  const lifecycle = createCallLifecycle({ ...deps, config, recordingUrl });
  const llm = createCallLlm({ ...deps, config });
  // This process, on the calls it runs: a restarted embedded server knows they are not its own.
  const runner = createCallRunner({ ...deps, lifecycle, config, turns: llm, runnerId: randomUUID() });
  const control = createCallControl(broadcast, runner);

  return {
    ...createCallsApi({ ...deps, lifecycle, assets }),
    ...createCallsEngine({ ...deps, config, lifecycle, runner }),
    ...createCallsDialer({ ...deps, config, lifecycle }),
    ...createCallsPlatform({ ...deps, lifecycle, control }),
    ...createCallsProviderCallbacks({ ...deps, config, lifecycle }),
    ...llm,
    ...createCallAnalysis({ ...deps, recordingUrl }),
  };
}

export type CallsService = ReturnType<typeof createCallsService>;

/**
 * What the calls module needs from other modules: narrow slices of their services (wired in services.ts).
 */
import type { AgentsService } from '../agents/agents.service.js';
import type { CatalogService } from '../catalog/catalog.service.js';
import type { ContactsService } from '../contacts/contacts.service.js';
import type { DispositionsService } from '../dispositions/dispositions.service.js';
import type { DncService } from '../dnc/dnc.service.js';
import type { NumbersService } from '../numbers/numbers.service.js';
import type { LlmClient } from '../../providers/llm/index.js';
import type { TurnRecorder } from '../agent-llm/agent-llm.ports.js';

export type AgentsForCalls = Pick<AgentsService, 'forCall' | 'recordCompletedCall'>;
export type CallAgent = NonNullable<Awaited<ReturnType<AgentsService['forCall']>>>;
export type ContactsForCalls = Pick<ContactsService, 'forCall'>;
export type DncForCalls = Pick<DncService, 'isListed' | 'addFromCall'>;
/** The number a call goes out from, and where a call to one of the accounts' numbers goes. */
export type NumbersForCalls = Pick<NumbersService, 'callerNumber' | 'routeInbound'>;
export type DispositionsForCalls = Pick<DispositionsService, 'isValidCode' | 'resolve'>;
/** What the catalog charges for what a call used. */
export type PricingForCalls = Pick<CatalogService, 'price'>;
export type { PriceRequest } from '../catalog/catalog.service.js';
/**
 * The agent's LLM for one call (its prompt, knowledge and model; the agent-llm module below). The call hands down where
 * its turns are recorded: its timeline and costs are the calls module's own.
 */
export type AgentLlmForCalls = (context: {
  accountId: string;
  agent: CallAgent;
  callId: string;
  turns: TurnRecorder;
}) => LlmClient;
/**
 * The agent's model for work outside the conversation (a call's analysis), by the agent's liveLlmId; null when no
 * model answers it (the built-in playbook engine is not one).
 */
export type AgentModelForCalls = (liveLlmId: string | null) => Promise<LlmClient | null>;

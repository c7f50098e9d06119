/**
 * What the calls module needs from other modules, as narrow slices of their services (wired in services.ts).
 * Written as interfaces here so the engine states exactly what it relies on.
 */
import type { TxHandle } from '../../db/repo.js';
import type { AgentsService } from '../agents/agents.service.js';
import type { ContactsService } from '../contacts/contacts.service.js';
import type { DncService } from '../dnc/dnc.service.js';
import type { CallDirection } from './calls.tables.js';

export type AgentsForCalls = Pick<AgentsService, 'forCall' | 'recordCompletedCall'>;
export type CallAgent = NonNullable<Awaited<ReturnType<AgentsService['forCall']>>>;
export type ContactsForCalls = Pick<ContactsService, 'forCall'>;
export type DncForCalls = Pick<DncService, 'isListed' | 'addFromCall'>;

/** The account's phone numbers: which one a call goes out from, and where a call to one of them goes. */
export interface NumbersForCalls {
  /** The number to call from: the one named, or the account's default; null when the account has none. */
  callerNumber(accountId: string, id?: string): Promise<{ id: string; number: string } | null>;
  /** Where a call to `toNumber` goes, across accounts; null when no account holds the number. */
  routeInbound(toNumber: string): Promise<{ accountId: string; agentId: string | null } | null>;
}

/** The account's disposition codes. */
export interface DispositionsForCalls {
  isValidCode(accountId: string, code: string, tx?: TxHandle): Promise<boolean>;
}

/** What the catalog charges for what a call used. */
export type PriceRequest =
  | { kind: 'llm'; modelId?: string; quantity: { inputTokens: number; outputTokens: number } }
  | { kind: 'stt'; modelId?: string; quantity: { seconds: number } }
  | { kind: 'tts'; modelId?: string; quantity: { characters: number } }
  | { kind: 'telephony'; country?: string; direction: CallDirection; quantity: { seconds: number } }
  | { kind: 'platform'; quantity: { seconds: number } };

export interface PricedLine {
  kind: string;
  description: string;
  quantity: string;
  unit: string;
  unitPriceUsd: string;
  amountUsd: string;
}

export interface PricingForCalls {
  price(request: PriceRequest, tx?: TxHandle): Promise<{ amountUsd: string; lines: PricedLine[] }>;
}

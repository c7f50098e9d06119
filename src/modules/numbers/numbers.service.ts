/**
 * Phone numbers: the account's own numbers and those bought from the carrier (a dependency: the built-in one sells
 * only numbers set aside for fiction), their routing to agents, their monthly fees, and their reputation.
 * The reputation is computed here from the module's own record of the calls each number placed (number_calls),
 * written as each call ends (the call.completed / call.failed events, see numbers.jobs.ts) and backfilled from the
 * call history by the migration that made it. So numbers reads nothing of the calls module, which sits above it (a
 * call asks numbers which number to call from); a call is counted once it has ended.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import type { Config } from '../../config.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { normalizePhone } from '../../lib/phone.js';
import type { Auth } from '../../lib/caller.js';
import { AppError, invalidField, notFound } from '../../lib/errors.js';
import { envelope, type Page } from '../../db/pagination.js';
import { actorOf, type Actor, type DomainEvent } from '../../events/domain-events.js';
import type { AuthService } from '../auth/auth.service.js';
import type { AgentsService } from '../agents/agents.service.js';
import type { NewPhoneNumber, NumbersRepo, NumbersTx, PhoneNumberRow } from './numbers.repo.js';
import type {
  AddPhoneNumberInput,
  InventorySearchQuery,
  PurchaseInput,
  UpdatePhoneNumberInput,
} from './numbers.schemas.js';
import type { Carrier, NumberOffer } from '../../providers/carrier/index.js';
import { createReputationChecks, reputationOf, toReputation } from './numbers.reputation-checks.js';

/** Only what a phone number is written with: digits, spaces and + - ( ) . / */
const PHONE_CHARACTERS = /^[0-9+\-\s()./]+$/;

const toPhoneNumber = (row: PhoneNumberRow) => ({
  id: row.id,
  number: row.number,
  country: row.country,
  areaCode: row.area_code,
  capabilities: row.capabilities,
  agentId: row.agent_id,
  source: row.source,
  monthlyFeeUsd: row.monthly_fee_usd,
  reputation: reputationOf(row),
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

/**
 * The country and (for +1 numbers, whose area code is the first three digits) the area code of a valid E.164
 * number; null for a number of no country (+800 and other global services).
 */
function describeNumber(e164: string) {
  const parsed = parsePhoneNumberFromString(e164);
  if (!parsed?.country) return null;
  return {
    country: parsed.country,
    areaCode: parsed.countryCallingCode === '1' ? parsed.nationalNumber.slice(0, 3) : null,
  };
}

export interface NumbersDeps {
  repo: NumbersRepo;
  clock: Clock;
  config: Pick<Config, 'numberMonthlyFeesUsd'>;
  accounts: Pick<AuthService, 'defaultCountry'>;
  agents: Pick<AgentsService, 'setInboundNumber' | 'liveAgent'>;
  /** Where numbers are bought. */
  carrier: Carrier;
}

export function createNumbersService(deps: NumbersDeps) {
  const { repo, clock, config, accounts, agents, carrier } = deps;
  const reputation = createReputationChecks({ repo, clock });

  /** A number from a request, in E.164: any common format, read in the account's country when it has no country code. */
  async function e164(accountId: string, text: string, field: string) {
    if (!PHONE_CHARACTERS.test(text)) throw invalidField(field, 'may contain only digits, spaces and + - ( ) . /');
    const normalized = normalizePhone(text, await accounts.defaultCountry(accountId));
    if ('error' in normalized) throw invalidField(field, `is not a valid phone number (${normalized.message})`);
    return normalized.e164;
  }

  async function requireNumber(auth: Auth, id: string) {
    const row = await repo.find(auth.accountId, id);
    if (!row) throw notFound('Phone number');
    return row;
  }

  /** The monthly fee of a number bought in the country, or undefined when the operator sells none there. */
  const feeFor = (country: string): string | undefined =>
    config.numberMonthlyFeesUsd[country] ?? config.numberMonthlyFeesUsd['*'];

  /** The carrier's numbers in an area, or a 400 naming the field that makes it have none. */
  async function inventoryOf(
    country: string,
    areaCode: string,
    where: 'querystring' | 'body',
  ): Promise<{ offers: NumberOffer[]; fee: string }> {
    const fee = feeFor(country);
    if (fee === undefined) throw invalidField(`${where}/country`, `numbers in ${country} are not for sale here`);
    const inventory = await carrier.inventory(country, areaCode);
    if (!Array.isArray(inventory)) throw invalidField(`${where}/${inventory.problem}`, inventory.message);
    return { offers: inventory, fee };
  }

  async function freeOffers(offers: NumberOffer[]) {
    const taken = await repo.takenAmong(offers.map((offer) => offer.number));
    return offers.filter((offer) => !taken.has(offer.number));
  }

  const assignedEvent = (
    row: PhoneNumberRow,
    previousAgentId: string | null,
    actor: Actor | null,
    reason?: string,
  ) => ({
    type: 'phone_number.assigned' as const,
    accountId: row.account_id,
    subject: { type: 'phone_number', id: row.id },
    data: { number: row.number, agentId: row.agent_id, previousAgentId, ...(reason ? { reason } : {}) },
    actor,
  });

  /** Buys the offer in the transaction: the number, its first month's charge and the event; undefined if it was taken. */
  async function buy(tx: NumbersTx, auth: Auth, offer: NumberOffer, fee: string) {
    const now = clock.now();
    const row = await tx.insert(auth.accountId, {
      id: newId(),
      number: offer.number,
      country: offer.country,
      area_code: offer.areaCode,
      capabilities: offer.capabilities,
      source: 'purchased',
      monthly_fee_usd: fee,
      created_at: now,
      updated_at: now,
    });
    if (!row) return undefined;
    await tx.insertCharge(auth.accountId, {
      id: newId(),
      phoneNumberId: row.id,
      number: row.number,
      description: `Monthly fee for ${row.number}`,
      amountUsd: row.monthly_fee_usd,
      periodStart: now,
    });
    await tx.emit({
      type: 'phone_number.purchased',
      accountId: auth.accountId,
      subject: { type: 'phone_number', id: row.id },
      data: { number: row.number, carrier: carrier.name, monthlyFeeUsd: row.monthly_fee_usd },
      actor: actorOf(auth),
    });
    return row;
  }

  return {
    async list(auth: Auth, page: Page) {
      const { items, total } = await repo.list(auth.accountId, {}, page);
      return envelope('phoneNumbers', items.map(toPhoneNumber), total, page);
    },

    async unassigned(auth: Auth, page: Page) {
      const { items, total } = await repo.list(auth.accountId, { unassigned: true }, page);
      return envelope('phoneNumbers', items.map(toPhoneNumber), total, page);
    },

    /** Adds a number the account already owns; a number some account holds already is a 409. */
    async add(auth: Auth, input: AddPhoneNumberInput) {
      const number = await e164(auth.accountId, input.number, 'body/number');
      const now = clock.now();
      const described = describeNumber(number);
      if (!described)
        throw invalidField('body/number', 'belongs to no country (a global service number); add a number of a country');
      const { country, areaCode } = described;
      const row: NewPhoneNumber = {
        id: newId(),
        number,
        country,
        area_code: areaCode,
        capabilities: ['voice'],
        source: 'byo',
        monthly_fee_usd: '0',
        created_at: now,
        updated_at: now,
      };
      const added = await repo.transaction(async (tx) => {
        const inserted = await tx.insert(auth.accountId, row);
        if (!inserted) return undefined;
        await tx.emit({
          type: 'phone_number.added',
          accountId: auth.accountId,
          subject: { type: 'phone_number', id: inserted.id },
          data: { number },
          actor: actorOf(auth),
        });
        return inserted;
      });
      if (added) return toPhoneNumber(added);
      const own = await repo.findByNumber(auth.accountId, number);
      throw new AppError(
        'conflict',
        own
          ? `${number} is already one of this account's numbers`
          : `${number} is already registered to another account`,
        { number, ...(own ? { id: own.id } : {}) },
      );
    },

    /**
     * Routes the number's inbound calls to an agent, or to none with null. The agent's inboundDid follows in the same
     * transaction. An agent has one inbound number: giving it this one frees the number it had.
     */
    async update(auth: Auth, id: string, input: UpdatePhoneNumberInput) {
      const agentId = input.agentId;
      return repo.transaction(async (tx) => {
        const current = await tx.findForUpdate(auth.accountId, id);
        if (!current) throw notFound('Phone number');
        if (current.agent_id === agentId) return toPhoneNumber(current);
        const now = clock.now();
        const actor = actorOf(auth);
        // Free the number's agent first: a number is routed to one agent at a time (agents.inbound_did is unique).
        if (current.agent_id) await agents.setInboundNumber(tx, auth.accountId, current.agent_id, null);
        if (agentId) {
          if (!(await agents.setInboundNumber(tx, auth.accountId, agentId, current.number))) throw notFound('Agent');
          const previous = await tx.findByAgent(auth.accountId, agentId);
          if (previous)
            await tx.emit(
              assignedEvent(await tx.setAgent(auth.accountId, previous.id, null, now), agentId, actor, 'moved'),
            );
        }
        const row = await tx.setAgent(auth.accountId, id, agentId, now);
        await tx.emit(assignedEvent(row, current.agent_id, actor));
        return toPhoneNumber(row);
      });
    },

    /** Removes the number from the account (a bought one goes back to the carrier); its agent's inboundDid is cleared. */
    async remove(auth: Auth, id: string) {
      return repo.transaction(async (tx) => {
        const row = await tx.findForUpdate(auth.accountId, id);
        if (!row) throw notFound('Phone number');
        if (row.agent_id) await agents.setInboundNumber(tx, auth.accountId, row.agent_id, null);
        await tx.delete(auth.accountId, id);
        await tx.emit({
          type: 'phone_number.released',
          accountId: auth.accountId,
          subject: { type: 'phone_number', id },
          data: { number: row.number, source: row.source, agentId: row.agent_id },
          actor: actorOf(auth),
        });
        return { id, deleted: true as const };
      });
    },

    /** Free numbers of the built-in carrier in an area code, always in the same order. */
    async searchInventory(_auth: Auth, query: InventorySearchQuery) {
      const country = query.country.toUpperCase();
      const { offers, fee } = await inventoryOf(country, query.areaCode, 'querystring');
      const free = await freeOffers(offers);
      const page = free
        .slice(query.offset, query.offset + query.limit)
        .map((offer) => ({ ...offer, monthlyFeeUsd: fee }));
      return envelope('availableNumbers', page, free.length, query);
    },

    /** Buys a number (one from a search, or the first free one in an area code) and charges its first month. */
    async purchase(auth: Auth, input: PurchaseInput) {
      if (input.number !== undefined) {
        if (input.country !== undefined || input.areaCode !== undefined) {
          throw invalidField('body', 'must name either a number, or a country and an areaCode, not both');
        }
        const number = await e164(auth.accountId, input.number, 'body/number');
        const offer = await carrier.offerFor(number);
        if (!offer)
          throw invalidField(
            'body/number',
            'is not a number the built-in carrier sells: pick one from the inventory search',
          );
        const fee = feeFor(offer.country);
        if (fee === undefined)
          throw invalidField('body/number', `is in ${offer.country}, where numbers are not for sale here`);
        const row = await repo.transaction((tx) => buy(tx, auth, offer, fee));
        if (!row) throw new AppError('conflict', `${number} is no longer available`, { number });
        return toPhoneNumber(row);
      }
      if (input.country === undefined || input.areaCode === undefined) {
        throw invalidField('body', 'must name a number, or a country and an areaCode');
      }
      const country = input.country.toUpperCase();
      const { offers, fee } = await inventoryOf(country, input.areaCode, 'body');
      const free = await freeOffers(offers);
      // Someone may buy a number between the search and the insert: then the next one is taken.
      const row = await repo.transaction(async (tx) => {
        for (const offer of free.slice(0, 5)) {
          const bought = await buy(tx, auth, offer, fee);
          if (bought) return bought;
        }
        return undefined;
      });
      if (!row) {
        throw new AppError('conflict', `No free numbers left in area code ${input.areaCode} (${country})`, {
          country,
          areaCode: input.areaCode,
        });
      }
      return toPhoneNumber(row);
    },

    /** Every number's reputation; a check never made, or older than an hour, is made now. */
    reputations: (auth: Auth, page: Page) => reputation.list(auth.accountId, page),

    async recheckReputation(auth: Auth, id: string) {
      const [row] = await reputation.check(auth.accountId, [await requireNumber(auth, id)]);
      if (!row) throw notFound('Phone number');
      return toReputation(row);
    },

    /** The agent that takes calls to a number of the caller's account. */
    async inboundRoute(auth: Auth, to: string) {
      const number = await e164(auth.accountId, to, 'querystring/to');
      const row = await repo.findByNumber(auth.accountId, number);
      if (!row) throw new AppError('not_found', `${number} is not one of this account's numbers`);
      const agent = row.agent_id ? await agents.liveAgent(auth.accountId, row.agent_id) : undefined;
      if (!agent)
        throw new AppError('not_found', `No agent takes calls to ${number}; assign one to the number`, {
          phoneNumberId: row.id,
        });
      return {
        number,
        phoneNumberId: row.id,
        agentId: agent.id,
        agentName: agent.name,
        agentStatus: agent.status,
        accountId: auth.accountId,
      };
    },

    /**
     * For the dialer: these numbers of the account with their reputation label (checked now when never checked or
     * older than an hour); a number the account no longer has is left out.
     */
    async forCampaign(accountId: string, ids: readonly string[]) {
      const rows = (await Promise.all(ids.map((id) => repo.find(accountId, id)))).filter((row) => row !== undefined);
      return (await reputation.current(accountId, rows)).map((row) => ({
        id: row.id,
        number: row.number,
        label: row.reputation_label,
      }));
    },

    /**
     * For the call engine: the number an account calls from. The given one (404 when it is not the account's), or
     * else its best-reputation number; null when the account has no numbers.
     */
    async callerNumber(accountId: string, id?: string): Promise<{ id: string; number: string } | null> {
      if (id !== undefined) {
        const row = await repo.find(accountId, id);
        if (!row) throw notFound('Phone number');
        return { id: row.id, number: row.number };
      }
      return (await repo.preferredCaller(accountId)) ?? null;
    },

    /**
     * For the call engine: where a call to `toNumber` (E.164) goes, across all accounts. Null when no account holds
     * the number; agentId is null when the number has no agent (or its agent was deleted).
     */
    async routeInbound(toNumber: string) {
      const row = await repo.routeOf(toNumber);
      if (!row) return null;
      const agent = row.agent_id ? await agents.liveAgent(row.account_id, row.agent_id) : undefined;
      return {
        accountId: row.account_id,
        phoneNumberId: row.id,
        number: row.number,
        agentId: agent?.id ?? null,
        agentName: agent?.name ?? null,
        agentStatus: agent?.status ?? null,
      };
    },

    /** Subscriber to call.completed / call.failed (see numbers.reputation-checks.ts). */
    recordCallEnded: reputation.recordCallEnded,

    /** Subscriber to agent.deleted: the deleted agent's numbers become unassigned. Idempotent. */
    async releaseDeletedAgent(event: DomainEvent) {
      const agentId = event.subject.id;
      return repo.transaction(async (tx) => {
        const freed = await tx.unassignAgent(event.accountId, agentId, clock.now());
        for (const { id } of freed) {
          const row = (await tx.find(event.accountId, id))!;
          await tx.emit(assignedEvent(row, agentId, null, 'agent_deleted'));
        }
        return freed.length;
      });
    },

    /** Scheduled: charges the next month of every bought number whose paid month has ended. */
    async renewMonthlyFees() {
      let charged = 0;
      // A number whose renewals were missed for months catches up one month per pass.
      for (let pass = 0; pass < 24; pass++) {
        const count = await repo.renewDueCharges(clock.now());
        charged += count;
        if (count === 0) break;
      }
      return charged;
    },

    /** For billing: the account's number charges whose period starts in [from, until). */
    async chargesBetween(accountId: string, from: Date, until: Date) {
      const rows = await repo.chargesBetween(accountId, from, until);
      return rows.map((row) => ({
        id: row.id,
        phoneNumberId: row.phone_number_id,
        number: row.number,
        description: row.description,
        amountUsd: row.amount_usd,
        periodStart: row.period_start,
        periodEnd: row.period_end,
      }));
    },
  };
}

export type NumbersService = ReturnType<typeof createNumbersService>;

/**
 * Campaigns: the resource (create, read, update, start, pause, cancel, stats) and its dialer. States: draft -> running <->
 * paused -> completed, and cancelled. A paused campaign records why (manual, compliance with its figures, or no
 * usable caller number).
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { OwnershipCheck } from '../../db/ownership.js';
import type { Auth } from '../../lib/caller.js';
import { AppError, invalidField, notFound } from '../../lib/errors.js';
import { envelope } from '../../db/pagination.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { actorOf, type DomainEvent } from '../../events/domain-events.js';
import type { JobQueue } from '../../jobs/queue.js';
import { DEFAULT_SCHEDULE } from './campaigns.window.js';
import { createCampaignDialer, type CampaignPause } from './campaigns.dialer.js';
import { ABANDON_PAUSE_THRESHOLD, ABANDON_TARGET, abandonRate, windows } from './campaigns.pace.js';
import type { CampaignRow, CampaignsRepo, CampaignsTx } from './campaigns.repo.js';
import type {
  AgentsForCampaigns,
  CallsForCampaigns,
  ContactsForCampaigns,
  DncForCampaigns,
  NumbersForCampaigns,
} from './campaigns.ports.js';
import type { CreateCampaignInput, ListCampaignsQuery, UpdateCampaignInput } from './campaigns.schemas.js';
import { RETRY_OUTCOMES, type CampaignStatus, type RetryRules } from './campaigns.tables.js';

export interface CampaignsDeps {
  repo: CampaignsRepo;
  clock: Clock;
  config: Config;
  owned: OwnershipCheck;
  jobs: Pick<JobQueue, 'send'>;
  agents: AgentsForCampaigns;
  contacts: ContactsForCampaigns;
  dnc: DncForCampaigns;
  numbers: NumbersForCampaigns;
  calls: CallsForCampaigns;
  log: Logger;
}

/** Changes a running campaign takes; the rest need it paused (or a draft). */
const SAFE_WHILE_RUNNING = new Set(['maxConcurrency', 'callsPerMinute', 'schedule', 'stopAt']);

const iso = (value: Date | null) => (value === null ? null : value.toISOString());
const HOUR = 3600_000;

function retryRules(input: CreateCampaignInput['retryRules'], previous?: RetryRules): RetryRules {
  const rules = {} as RetryRules;
  for (const outcome of RETRY_OUTCOMES)
    rules[outcome] = input?.[outcome] ?? previous?.[outcome] ?? { attempts: 0, spacingMinutes: 60 };
  return rules;
}

const toCampaign = (row: CampaignRow) => ({
  id: row.id,
  name: row.name,
  agentId: row.agent_id,
  contactListIds: row.contact_list_ids,
  fromNumberIds: row.from_number_ids,
  maxConcurrency: row.max_concurrency,
  callsPerMinute: row.calls_per_minute,
  schedule: row.schedule,
  retryRules: row.retry_rules,
  maxAttemptsPerContact: row.max_attempts_per_contact,
  stopAt: iso(row.stop_at),
  voicemailAction: row.voicemail_action,
  status: row.status,
  pause:
    row.status === 'paused' && row.paused_reason
      ? { reason: row.paused_reason, details: row.paused_details ?? {} }
      : null,
  startedAt: iso(row.started_at),
  completedAt: iso(row.completed_at),
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

/** A job id per campaign and time slot: however many wake-ups are asked for one slot, one dial job runs. */
function dialJobId(campaignId: string, slot: number) {
  const hex = createHash('sha256').update(`${campaignId}:${slot}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export function createCampaignsService(deps: CampaignsDeps) {
  const { repo, clock, config, owned, jobs, agents, calls, log } = deps;
  const rules = config.campaigns;

  async function requireCampaign(auth: Auth, id: string) {
    const row = await repo.find(auth.accountId, id);
    if (!row) throw notFound('Campaign');
    return row;
  }

  const conflict = (row: CampaignRow, action: string) =>
    new AppError('conflict', `The campaign is ${row.status}: it cannot be ${action}`, { status: row.status });

  async function checkReferences(
    auth: Auth,
    input: { agentId?: string; contactListIds?: string[]; fromNumberIds?: string[] },
  ) {
    await owned.requireOwned(auth, {
      agents: input.agentId ? [input.agentId] : [],
      contactLists: input.contactListIds ?? [],
    });
    if (input.fromNumberIds?.length) {
      const found = await deps.numbers.forCampaign(auth.accountId, input.fromNumberIds);
      if (found.length !== input.fromNumberIds.length) throw notFound('Phone number');
    }
  }

  function checkSchedule(schedule: { start: string; end: string } | undefined) {
    if (schedule && schedule.start >= schedule.end) throw invalidField('body/schedule/end', 'must be later than start');
  }

  /** Pauses in the caller's transaction; a compliance pause also emits campaign.compliance_paused and lists it in /v1/events. */
  async function pause(tx: CampaignsTx, campaign: CampaignRow, { reason, details }: CampaignPause) {
    const now = clock.now();
    await tx.update(campaign.account_id, campaign.id, {
      status: 'paused',
      paused_reason: reason,
      paused_details: JSON.stringify(details),
      updated_at: now,
    });
    if (reason === 'compliance') {
      const data = { campaignId: campaign.id, ...details };
      await tx.emit({
        type: 'campaign.compliance_paused',
        accountId: campaign.account_id,
        subject: { type: 'campaign', id: campaign.id },
        data,
        actor: null,
      });
      await calls.recordCampaignEvent(tx, campaign.account_id, 'campaign.compliance_paused', data);
      log.warn({ campaignId: campaign.id, ...details }, 'campaign paused: abandon rate above the limit');
    }
  }

  const dialer = createCampaignDialer({ ...deps, config: rules, pause });

  /** Asks for a dial pass of the campaign in about `delaySeconds` (deduplicated per time slot). */
  async function wake(accountId: string, campaignId: string, delaySeconds = 0) {
    const slotMs = rules.tickSeconds * 1000;
    const slot = Math.ceil((Date.now() + delaySeconds * 1000) / slotMs);
    await jobs.send(
      'campaigns.dial',
      { accountId, campaignId },
      { id: dialJobId(campaignId, slot), startAfter: new Date(slot * slotMs) },
    );
  }

  return {
    async create(auth: Auth, input: CreateCampaignInput) {
      await checkReferences(auth, input);
      checkSchedule(input.schedule);
      const name = input.name.trim();
      if (!name) throw invalidField('body/name', 'must not be blank');
      const now = clock.now();
      const maxConcurrency = input.maxConcurrency ?? 5;
      const row = await repo.transaction((tx) =>
        tx.insertCampaign(auth.accountId, {
          id: newId(),
          name,
          agent_id: input.agentId,
          contact_list_ids: input.contactListIds,
          from_number_ids: input.fromNumberIds ?? [],
          max_concurrency: maxConcurrency,
          calls_per_minute: input.callsPerMinute ?? 30,
          schedule: JSON.stringify(input.schedule ?? DEFAULT_SCHEDULE),
          retry_rules: JSON.stringify(retryRules(input.retryRules)),
          max_attempts_per_contact: input.maxAttemptsPerContact ?? 3,
          stop_at: input.stopAt ? new Date(input.stopAt) : null,
          voicemail_action: input.voicemailAction ?? 'hang_up',
          paused_reason: null,
          paused_details: null,
          pace_limit: Math.min(maxConcurrency, 2),
          started_at: null,
          completed_at: null,
          created_at: now,
          updated_at: now,
        }),
      );
      return toCampaign(row);
    },

    async list(auth: Auth, query: ListCampaignsQuery) {
      const page = { limit: query.limit, offset: query.offset };
      const { items, total } = await repo.list(auth.accountId, { status: query.status }, page);
      return envelope('campaigns', items.map(toCampaign), total, page);
    },

    async get(auth: Auth, id: string) {
      return toCampaign(await requireCampaign(auth, id));
    },

    async update(auth: Auth, id: string, input: UpdateCampaignInput) {
      await requireCampaign(auth, id);
      await checkReferences(auth, input);
      checkSchedule(input.schedule);
      const row = await repo.transaction(async (tx) => {
        const current = await tx.findForUpdate(auth.accountId, id);
        if (!current) throw notFound('Campaign');
        if (current.status === 'completed' || current.status === 'cancelled') throw conflict(current, 'changed');
        const unsafe = Object.keys(input).filter((field) => !SAFE_WHILE_RUNNING.has(field));
        if (current.status === 'running' && unsafe.length > 0) {
          throw new AppError(
            'conflict',
            `A running campaign takes only changes of pace, schedule and concurrency; pause it to change ${unsafe.join(', ')}`,
            {
              status: current.status,
              fields: unsafe,
            },
          );
        }
        if (current.contacts_loaded && input.contactListIds) {
          throw new AppError('conflict', 'The contact lists of a campaign that has started cannot change', {
            status: current.status,
            fields: ['contactListIds'],
          });
        }
        const name = input.name?.trim();
        if (input.name !== undefined && !name) throw invalidField('body/name', 'must not be blank');
        return tx.update(auth.accountId, id, {
          ...(name ? { name } : {}),
          ...(input.agentId ? { agent_id: input.agentId } : {}),
          ...(input.contactListIds ? { contact_list_ids: input.contactListIds } : {}),
          ...(input.fromNumberIds ? { from_number_ids: input.fromNumberIds } : {}),
          ...(input.maxConcurrency
            ? { max_concurrency: input.maxConcurrency, pace_limit: Math.min(current.pace_limit, input.maxConcurrency) }
            : {}),
          ...(input.callsPerMinute ? { calls_per_minute: input.callsPerMinute } : {}),
          ...(input.schedule ? { schedule: JSON.stringify(input.schedule) } : {}),
          ...(input.retryRules
            ? { retry_rules: JSON.stringify(retryRules(input.retryRules, current.retry_rules)) }
            : {}),
          ...(input.maxAttemptsPerContact ? { max_attempts_per_contact: input.maxAttemptsPerContact } : {}),
          ...(input.stopAt !== undefined ? { stop_at: input.stopAt ? new Date(input.stopAt) : null } : {}),
          ...(input.voicemailAction ? { voicemail_action: input.voicemailAction } : {}),
          updated_at: clock.now(),
        });
      });
      return toCampaign(row);
    },

    /** Starts a draft (its contacts are queued) or resumes a paused campaign; emits campaign.started. */
    async start(auth: Auth, id: string) {
      await requireCampaign(auth, id);
      const agentRow = await requireCampaign(auth, id).then((row) => agents.forCall(auth.accountId, row.agent_id));
      if (agentRow?.status !== 'active') {
        throw new AppError(
          'conflict',
          `The campaign's agent is ${agentRow?.status ?? 'deleted'}: only an active agent makes calls`,
          { reason: 'agent_not_active' },
        );
      }
      const row = await repo.transaction(async (tx) => {
        const current = await tx.findForUpdate(auth.accountId, id);
        if (!current) throw notFound('Campaign');
        if (current.status !== 'draft' && current.status !== 'paused') throw conflict(current, 'started');
        const now = clock.now();
        if (!current.contacts_loaded) {
          await tx.loadContacts(
            auth.accountId,
            id,
            deps.contacts.membersOfListsQuery(auth.accountId, current.contact_list_ids),
            now,
          );
        }
        const started = await tx.update(auth.accountId, id, {
          status: 'running',
          contacts_loaded: true,
          paused_reason: null,
          paused_details: null,
          started_at: current.started_at ?? now,
          updated_at: now,
        });
        const data = { campaignId: id, name: current.name, agentId: current.agent_id };
        await tx.emit({
          type: 'campaign.started',
          accountId: auth.accountId,
          subject: { type: 'campaign', id },
          data,
          actor: actorOf(auth),
        });
        await calls.recordCampaignEvent(tx, auth.accountId, 'campaign.started', data);
        return started;
      });
      await wake(auth.accountId, id);
      return toCampaign(row);
    },

    /** Stops new dials at once; calls under way finish. */
    async pause(auth: Auth, id: string) {
      await requireCampaign(auth, id);
      const row = await repo.transaction(async (tx) => {
        const current = await tx.findForUpdate(auth.accountId, id);
        if (!current) throw notFound('Campaign');
        if (current.status !== 'running') throw conflict(current, 'paused');
        await pause(tx, current, { reason: 'manual', details: { pausedAt: clock.now().toISOString() } });
        return (await tx.find(auth.accountId, id))!;
      });
      return toCampaign(row);
    },

    /**
     * Ends a draft, running or paused campaign for good: nothing more is dialled (a dial pass under way checks the
     * state before each dial), calls under way finish and their outcomes are still counted.
     */
    async cancel(auth: Auth, id: string) {
      await requireCampaign(auth, id);
      const row = await repo.transaction(async (tx) => {
        const current = await tx.findForUpdate(auth.accountId, id);
        if (!current) throw notFound('Campaign');
        if (current.status !== 'draft' && current.status !== 'running' && current.status !== 'paused')
          throw conflict(current, 'cancelled');
        return tx.update(auth.accountId, id, {
          status: 'cancelled',
          paused_reason: null,
          paused_details: null,
          updated_at: clock.now(),
        });
      });
      return toCampaign(row);
    },

    async stats(auth: Auth, id: string) {
      const campaign = await requireCampaign(auth, id);
      const now = clock.now();
      // The observed pace: dials of the last hour, or since the start when the campaign is younger.
      const paceSince = new Date(Math.max(now.getTime() - HOUR, (campaign.started_at ?? now).getTime()));
      const [stats, counters, figures, dueNow, inFlight, recentDials] = await Promise.all([
        repo.stats(auth.accountId, id),
        repo.counters(auth.accountId, id),
        repo.abandonFigures(auth.accountId, id, windows(now)),
        repo.dueNow(auth.accountId, id, now),
        repo.inFlight(auth.accountId, id),
        repo.dialedSince(auth.accountId, id, paceSince),
      ]);
      const withRate = (figure: { abandoned: number; liveAnswered: number }) => ({
        ...figure,
        rate: Number(abandonRate(figure).toFixed(6)),
      });
      const remaining = stats.contacts_total - stats.contacts_done;
      // Projected at the observed pace (remaining contacts × time per dial in the window), or at the configured pace
      // while no dial has been observed in the window.
      let projectedCompletionAt: string | null = null;
      if (campaign.status === 'completed') projectedCompletionAt = iso(campaign.completed_at);
      else if (campaign.status === 'running' && remaining > 0) {
        const windowMs = now.getTime() - paceSince.getTime();
        let remainingMs: number;
        if (recentDials > 0 && windowMs > 0) remainingMs = Math.ceil((remaining * windowMs) / recentDials);
        else {
          const perMinute = Math.max(1, Math.min(campaign.calls_per_minute, campaign.max_concurrency * 2));
          remainingMs = Math.ceil(remaining / perMinute) * 60_000;
        }
        projectedCompletionAt = new Date(now.getTime() + remainingMs).toISOString();
      }
      const byKind = (kind: string) =>
        Object.fromEntries(counters.filter((c) => c.kind === kind).map((c) => [c.key, c.count]));
      return {
        campaignId: id,
        status: campaign.status,
        counts: {
          dialed: stats.dialed,
          connected: stats.connected,
          liveAnswered: stats.live_answered,
          voicemail: stats.voicemail,
          busy: stats.busy,
          noAnswer: stats.no_answer,
          failed: stats.failed,
          abandoned: stats.abandoned,
        },
        abandonRate: {
          last30Days: withRate(figures.last30Days),
          today: withRate(figures.today),
          lastHour: withRate(figures.lastHour),
          threshold: ABANDON_PAUSE_THRESHOLD,
          governorTarget: ABANDON_TARGET,
          paceFactor: Number(
            (Math.min(campaign.max_concurrency, campaign.pace_limit) / campaign.max_concurrency).toFixed(4),
          ),
        },
        gateDenials: byKind('denial'),
        avgTalkSeconds:
          stats.talk_calls > 0 ? Number((Number(stats.talk_seconds) / stats.talk_calls).toFixed(2)) : null,
        costUsd: stats.cost_usd,
        dispositions: byKind('disposition'),
        contacts: { total: stats.contacts_total, finished: stats.contacts_done, remaining, dueNow, inCall: inFlight },
        projectedCompletionAt,
      };
    },

    /** The campaigns.dial job: one dial pass, then the next one is asked for while the campaign runs. */
    async dialPass(accountId: string, campaignId: string) {
      const result = await dialer.tick(accountId, campaignId);
      if (result.status === 'running') await wake(accountId, campaignId, rules.tickSeconds);
      return result;
    },

    /** Subscriber to call.completed / call.failed: a campaign call ended. */
    async callEnded(event: DomainEvent<'call.completed' | 'call.failed'>) {
      const { campaignId } = event.data;
      if (!campaignId) return { skipped: 'not a campaign call' };
      const result = await dialer.recordOutcome(event.accountId, event.subject.id);
      const campaign = await repo.find(event.accountId, campaignId);
      if (campaign?.status === 'running') {
        if (!(await dialer.completeIfDone(campaign))) await wake(event.accountId, campaignId);
      }
      return result;
    },

    /** Every minute and at worker start: wakes the dialer of every running campaign (a chain lost in a crash restarts). */
    async sweep() {
      const running = await repo.runningCampaigns();
      for (const { id, account_id } of running) await wake(account_id, id);
      return { running: running.length };
    },

    /** For tests and tools: one dial pass now, without scheduling the next. */
    tick: (accountId: string, campaignId: string) => dialer.tick(accountId, campaignId),
  };
}

export type CampaignsService = ReturnType<typeof createCampaignsService>;
export type { CampaignStatus };

import type { Redis } from 'ioredis';
import { pino, type Logger } from 'pino';
import type { Config } from './config.js';
import type { DatabaseHandle } from './db/client.js';
import { createOwnershipCheck } from './db/ownership.js';
import type { Clock } from './lib/clock.js';
import type { CounterStore } from './lib/counter-store.js';
import type { InvalidationBus } from './lib/invalidation-bus.js';
import type { Broadcast } from './lib/broadcast.js';
import type { Providers } from './runtime.js';
import { createSimVoiceProvider } from './providers/voice/index.js';
import { createSimCarrier } from './providers/carrier/sim-carrier.js';
import type { JobQueue } from './jobs/queue.js';
import { eventRoutes, type BackgroundServices } from './background.js';
import { relayLoopWakes } from './lib/wake.js';
import { createDomainEventsService } from './events/domain-events.service.js';
import { createOutboxFactory } from './events/outbox.js';
import { createWebhookFanout } from './modules/webhooks/webhooks.fanout.js';
import { createAuthRepo } from './modules/auth/auth.repo.js';
import { createAuthService } from './modules/auth/auth.service.js';
import { createApiKeysRepo } from './modules/api-keys/api-keys.repo.js';
import { createApiKeysService } from './modules/api-keys/api-keys.service.js';
import { createSystemService } from './modules/system/system.service.js';
import { createAgentsRepo } from './modules/agents/agents.repo.js';
import { createAgentsService } from './modules/agents/agents.service.js';
import { createAuditRepo } from './modules/audit/audit.repo.js';
import { createAuditService } from './modules/audit/audit.service.js';
import { createCallsRepo } from './modules/calls/calls.repo.js';
import { createCallsService } from './modules/calls/calls.service.js';
import { callAdminQueries } from './modules/calls/calls.admin-repo.js';
import { createCallsAdminService } from './modules/calls/calls.admin-service.js';
import { createContactsRepo } from './modules/contacts/contacts.repo.js';
import { createContactsService } from './modules/contacts/contacts.service.js';
import { contactsDncBulkFollower, createContactsDncSubscriber } from './modules/contacts/contacts.dnc-flags.js';
import { createDncRepo } from './modules/dnc/dnc.repo.js';
import { createDncService } from './modules/dnc/dnc.service.js';
import { createNumbersRepo } from './modules/numbers/numbers.repo.js';
import { createNumbersService } from './modules/numbers/numbers.service.js';
import { createDispositionsRepo } from './modules/dispositions/dispositions.repo.js';
import { createDispositionsService } from './modules/dispositions/dispositions.service.js';
import { createCatalogRepo } from './modules/catalog/catalog.repo.js';
import { createCatalogService } from './modules/catalog/catalog.service.js';
import { createVoicesService } from './modules/voices/voices.service.js';
import { createSafetyService } from './modules/safety/safety.service.js';
import { createAgentTemplatesService } from './modules/agent-templates/agent-templates.service.js';
import { createKnowledgeRepo } from './modules/knowledge/knowledge.repo.js';
import { createKnowledgeService } from './modules/knowledge/knowledge.service.js';
import { createAgentLlmService } from './modules/agent-llm/agent-llm.service.js';
import { createLlmProxyService } from './modules/llm-proxy/llm-proxy.service.js';
import { createWebhooksRepo } from './modules/webhooks/webhooks.repo.js';
import { createWebhooksService } from './modules/webhooks/webhooks.service.js';
import { createCampaignsRepo } from './modules/campaigns/campaigns.repo.js';
import { createCampaignsService } from './modules/campaigns/campaigns.service.js';

/** What the composition root needs from the outside world. */
export interface CoreDeps {
  config: Config;
  database: DatabaseHandle;
  redis: Redis | null;
  counters: CounterStore;
  /** Cache invalidation across instances (Redis pub/sub, or in-process). */
  bus: InvalidationBus;
  /** Enqueue background work; inside a repo transaction use `tx.send` instead (the outbox). */
  jobs: JobQueue;
  clock: Clock;
  /** Messages to every instance (controlling a live call from any of them). */
  broadcast: Broadcast;
  providers: Providers;
}

/**
 * The composition root: every repo and service, built once from plain factories. A service gets its own repo and,
 * from other modules, only the narrow slice of their services it uses.
 */
export function createServices(deps: CoreDeps, options: { log?: Logger } = {}) {
  const { config, clock, redis, counters, jobs, providers } = deps;
  const log = options.log ?? pino({ level: config.logLevel });
  const db = deps.database.db;
  const databaseKind = deps.database.kind;
  const outbox = createOutboxFactory({
    jobs,
    routes: eventRoutes,
    clock,
    inTransaction: [createWebhookFanout({ clock }), createContactsDncSubscriber()],
  });
  const owned = createOwnershipCheck(db);
  relayLoopWakes(deps.broadcast);

  const auth = createAuthService({ repo: createAuthRepo(db, outbox), clock, config, counters });
  const dnc = createDncService({
    repo: createDncRepo(db, outbox),
    db,
    databaseKind,
    outbox,
    config,
    clock,
    accounts: auth,
    bulkFollower: contactsDncBulkFollower,
  });
  const contacts = createContactsService({
    repo: createContactsRepo(db, outbox),
    db,
    databaseKind,
    outbox,
    config,
    clock,
    owned,
    accounts: auth,
    dnc,
    log: log.child({ component: 'contacts' }),
  });
  const catalog = createCatalogService({ repo: createCatalogRepo(db, outbox), clock });
  const voices = createVoicesService({ tts: providers.tts, objects: providers.objects, catalog });
  const agents = createAgentsService({ repo: createAgentsRepo(db, outbox), clock, choices: voices });
  const knowledge = createKnowledgeService({
    repo: createKnowledgeRepo(db, outbox),
    clock,
    config: config.knowledge,
    agents,
    log: log.child({ component: 'knowledge' }),
  });
  const numbers = createNumbersService({
    repo: createNumbersRepo(db, outbox),
    clock,
    config,
    accounts: auth,
    agents,
    carrier: createSimCarrier(),
  });
  const dispositions = createDispositionsService({ repo: createDispositionsRepo(db, outbox), clock });
  // A model writes and reviews agents only when one is configured; the playbook engine is not a model.
  const llmConfigured = config.llm.provider === 'openai';
  const safety = createSafetyService({ agents, llm: providers.llm, llmConfigured });
  const agentTemplates = createAgentTemplatesService({
    agents,
    dispositions,
    safety,
    llm: providers.llm,
    llmConfigured,
  });
  const agentLlm = createAgentLlmService({
    config,
    log: log.child({ component: 'agent-llm' }),
    knowledge,
    catalog,
    defaultLlm: providers.llm,
  });
  const calls = createCallsService({
    repo: createCallsRepo(db, outbox),
    clock,
    config,
    databaseKind,
    owned,
    agents,
    contacts,
    dnc,
    numbers,
    dispositions,
    pricing: catalog,
    voice: createSimVoiceProvider({
      clock,
      tts: providers.tts,
      agents: {
        slots: config.calls.simAgentSlots,
        lateStartRate: config.calls.simLateStartRate,
        lateStartMs: config.calls.simLateStartMs,
      },
    }),
    agentLlm: agentLlm.forCall,
    agentModel: agentLlm.modelFor,
    tts: providers.tts,
    objects: providers.objects,
    broadcast: deps.broadcast,
    log: log.child({ component: 'calls' }),
  });

  const llmProxy = createLlmProxyService({ clock, agents, agentLlm, calls });

  const campaigns = createCampaignsService({
    repo: createCampaignsRepo(db, outbox),
    clock,
    config,
    owned,
    jobs,
    agents,
    contacts,
    dnc,
    numbers,
    calls,
    log: log.child({ component: 'campaigns' }),
  });

  const services = {
    config,
    counters,
    jobs,
    /** Where a transaction records domain events and enqueues jobs (`repo.transaction` hands it to modules). */
    outbox,
    events: createDomainEventsService({ db, clock }),
    system: createSystemService({ db, redis, config, clock, databaseKind, objects: providers.objects }),
    auth,
    apiKeys: createApiKeysService({ repo: createApiKeysRepo(db, outbox), clock, bus: deps.bus }),
    agents,
    audit: createAuditService({ repo: createAuditRepo(db, outbox) }),
    calls,
    callsAdmin: createCallsAdminService({ repo: callAdminQueries(db), calls, agents, dnc, numbers }),
    contacts,
    dnc,
    numbers,
    dispositions,
    catalog,
    voices,
    safety,
    agentTemplates,
    knowledge,
    llmProxy,
    webhooks: createWebhooksService({
      repo: createWebhooksRepo(db, outbox),
      clock,
      config: config.webhooks,
    }),
    campaigns,
  };
  return services;
}

export type Services = ReturnType<typeof createServices>;

/** Each module's background work takes the service built under its name above: a mismatch fails to compile. */
export type ServicesRunBackground = Services extends BackgroundServices ? true : never;
const servicesRunBackground: ServicesRunBackground = true;
void servicesRunBackground;

/**
 * The Kysely schema: each module declares its own tables in <module>.tables.ts,
 * and this interface joins them. Column types mirror the SQL migrations.
 */
import type { AuthTables } from '../modules/auth/auth.tables.js';
import type { ApiKeysTables } from '../modules/api-keys/api-keys.tables.js';
import type { AgentsTables } from '../modules/agents/agents.tables.js';
import type { CallsTables } from '../modules/calls/calls.tables.js';
import type { ContactsTables } from '../modules/contacts/contacts.tables.js';
import type { DncTables } from '../modules/dnc/dnc.tables.js';
import type { AuditTables } from '../modules/audit/audit.tables.js';
import type { NumbersTables } from '../modules/numbers/numbers.tables.js';
import type { DispositionsTables } from '../modules/dispositions/dispositions.tables.js';
import type { CatalogTables } from '../modules/catalog/catalog.tables.js';
import type { KnowledgeTables } from '../modules/knowledge/knowledge.tables.js';
import type { CampaignsTables } from '../modules/campaigns/campaigns.tables.js';
import type { DomainEventsTables } from '../events/domain-events.js';
import type { WebhooksTables } from '../modules/webhooks/webhooks.tables.js';

export interface Database
  extends AuthTables,
    ApiKeysTables,
    AgentsTables,
    AuditTables,
    CallsTables,
    ContactsTables,
    DncTables,
    NumbersTables,
    DispositionsTables,
    CatalogTables,
    KnowledgeTables,
    CampaignsTables,
    DomainEventsTables,
    WebhooksTables {}

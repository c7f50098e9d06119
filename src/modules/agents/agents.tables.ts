import type { ColumnType, Generated } from 'kysely';

export const AGENT_STATUSES = ['draft', 'active', 'paused'] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

export const VOICEMAIL_ACTIONS = ['hang_up', 'leave_message'] as const;
export type VoicemailAction = (typeof VOICEMAIL_ACTIONS)[number];

/** What a declared analysis field holds: a date is YYYY-MM-DD; an email is an address the callee said or spelled. */
export const ANALYSIS_FIELD_TYPES = ['string', 'number', 'boolean', 'date', 'email'] as const;
export type AnalysisFieldType = (typeof ANALYSIS_FIELD_TYPES)[number];
/** A value the post-call analysis extracts from each of the agent's calls. */
export interface AnalysisField {
  name: string;
  type: AnalysisFieldType;
  description: string;
}

/** A text column with a database default of ''. */
type Text = Generated<string>;

export interface AgentsTable {
  id: string;
  account_id: string;
  name: string;
  status: Generated<AgentStatus>;
  version: Generated<number>;
  voice_id: string | null;
  live_llm_id: string | null;
  first_message: Text;
  soul: Text;
  mission: Text;
  playbook: Text;
  examples: Text;
  objections: Text;
  closers: Text;
  notes: Text;
  faq: Text;
  knowledge: Text;
  transfer_number: string | null;
  transfer_when: Text;
  voicemail_action: Generated<VoicemailAction>;
  voicemail_message: Text;
  /** What the post-call analysis extracts (JSON text in, parsed list out). */
  analysis_fields: ColumnType<AnalysisField[], string | undefined, string>;
  inbound_did: string | null;
  last_call_at: Date | null;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
  deleted_at: Date | null;
}

export interface AgentVersionsTable {
  id: string;
  agent_id: string;
  account_id: string;
  version: number;
  /** The parts this version changed (the others are those of the versions before it); written as JSON text. */
  parts: ColumnType<Record<string, string>, string, never>;
  changed_parts: ColumnType<string[], string[], never>;
  created_by_user_id: string | null;
  created_by_api_key_id: string | null;
  created_at: ColumnType<Date, Date | undefined, never>;
}

export interface AgentsTables {
  agents: AgentsTable;
  agent_versions: AgentVersionsTable;
}

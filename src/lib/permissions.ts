/**
 * The permission matrix: every action a route can declare, and the lowest account role allowed to take it.
 * Roles are ordered; a role may do everything the roles below it may. API keys act with the admin role.
 * The README's permission table is generated from this file (and a test keeps the two equal).
 */
export const MEMBER_ROLES = ['viewer', 'member', 'admin', 'owner'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

export const PERMISSIONS = {
  'account.read': {
    minimum: 'viewer',
    meaning:
      'Read agents, calls, events, contacts, lists, do-not-call entries, phone numbers, disposition codes and API key names',
  },
  'self.manage': { minimum: 'viewer', meaning: 'Manage one’s own sign-in: sessions, password, switching accounts' },
  'agents.write': { minimum: 'member', meaning: 'Create, change and delete agents' },
  'calls.write': { minimum: 'member', meaning: 'Place calls and set their dispositions' },
  'agents.converse': {
    minimum: 'member',
    meaning: 'Talk to an agent through the LLM proxy (charged to the named call)',
  },
  'contacts.write': { minimum: 'member', meaning: 'Import contact lists and change contacts' },
  'campaigns.write': { minimum: 'member', meaning: 'Create, change, start, pause and cancel campaigns' },
  'dnc.write': { minimum: 'member', meaning: 'Add and remove do-not-call entries' },
  'numbers.route': { minimum: 'member', meaning: 'Route phone numbers to agents and recheck their reputation' },
  'apiKeys.manage': { minimum: 'admin', meaning: 'Create and delete API keys' },
  'numbers.manage': {
    minimum: 'admin',
    meaning: 'Add, buy and release phone numbers (bought numbers are charged monthly)',
  },
  'audit.read': { minimum: 'admin', meaning: 'Read the audit log' },
  'webhooks.manage': {
    minimum: 'admin',
    meaning: 'Add, change, test and delete webhook endpoints, rotate their secrets, redeliver events',
  },
  'dispositions.manage': { minimum: 'admin', meaning: 'Add, change and delete disposition codes' },
} as const satisfies Record<string, { minimum: MemberRole; meaning: string }>;

export type Action = keyof typeof PERMISSIONS;

const RANK: Record<MemberRole, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };

export function roleMayTake(role: MemberRole, action: Action): boolean {
  return RANK[role] >= RANK[PERMISSIONS[action].minimum];
}

/** The matrix as a Markdown table: one row per action, one column per role. */
export function permissionTable(): string {
  const header = `| action | ${MEMBER_ROLES.join(' | ')} | meaning |`;
  const rule = `|---|${MEMBER_ROLES.map(() => '---').join('|')}|---|`;
  const rows = (Object.keys(PERMISSIONS) as Action[]).map(
    (action) =>
      `| \`${action}\` | ${MEMBER_ROLES.map((role) => (roleMayTake(role, action) ? 'yes' : '—')).join(' | ')} | ${PERMISSIONS[action].meaning} |`,
  );
  return [header, rule, ...rows].join('\n');
}

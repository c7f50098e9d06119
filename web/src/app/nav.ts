/**
 * The shell's navigation, in order: a new page that belongs in the menu adds one line here. `platformAdmin` items
 * are shown only to platform administrators (the API refuses their routes to everyone else anyway).
 */
export const NAV_ITEMS: ReadonlyArray<{ to: string; label: string; end: boolean; platformAdmin?: boolean }> = [
  { to: '/', label: 'Home', end: true },
  { to: '/agents', label: 'Agents', end: false },
  { to: '/test-call', label: 'Test call', end: false },
  { to: '/calls', label: 'Calls', end: false },
  { to: '/contacts', label: 'Contacts', end: false },
  { to: '/dnc', label: 'Do not call', end: false },
  { to: '/campaigns', label: 'Campaigns', end: false },
  { to: '/numbers', label: 'Numbers', end: false },
  { to: '/settings/webhooks', label: 'Webhooks', end: false },
  { to: '/settings/api-keys', label: 'API keys', end: false },
  { to: '/chat', label: 'Talk to an agent', end: false },
  { to: '/audit', label: 'Audit log', end: false },
  { to: '/admin', label: 'Platform admin', end: false, platformAdmin: true },
];

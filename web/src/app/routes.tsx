/**
 * Every page of the dashboard, each loaded on demand (route-level code splitting): a page is a module that exports
 * `Component` (see web/README.md). Pages inside the shell need a session; sign-in and register do not.
 */
import { createBrowserRouter } from 'react-router';
import { RequireSession } from './RequireSession';
import { Shell } from './Shell';
import { RouteError } from '../ui/states';

export const router = createBrowserRouter([
  { path: '/sign-in', lazy: () => import('../pages/SignIn'), errorElement: <RouteError /> },
  { path: '/register', lazy: () => import('../pages/Register'), errorElement: <RouteError /> },
  {
    element: (
      <RequireSession>
        <Shell />
      </RequireSession>
    ),
    errorElement: <RouteError />,
    children: [
      { index: true, lazy: () => import('../pages/Home') },
      { path: 'agents', lazy: () => import('../pages/agents/AgentsPage') },
      { path: 'agents/new', lazy: () => import('../pages/agents/NewAgentPage') },
      { path: 'agents/new/wizard', lazy: () => import('../pages/agents/WizardPage') },
      { path: 'agents/:id', lazy: () => import('../pages/agents/AgentPage') },
      { path: 'test-call', lazy: () => import('../pages/TestCallPage') },
      { path: 'calls', lazy: () => import('../pages/calls/CallsPage') },
      { path: 'calls/:id', lazy: () => import('../pages/calls/CallPage') },
      { path: 'contacts', lazy: () => import('../pages/contacts/ContactListsPage') },
      { path: 'contacts/import', lazy: () => import('../pages/contacts/ImportPage') },
      { path: 'contacts/lists/:id', lazy: () => import('../pages/contacts/ContactListPage') },
      { path: 'contacts/:id', lazy: () => import('../pages/contacts/ContactPage') },
      { path: 'dnc', lazy: () => import('../pages/contacts/DncPage') },
      { path: 'campaigns', lazy: () => import('../pages/campaigns/CampaignsPage') },
      { path: 'campaigns/new', lazy: () => import('../pages/campaigns/NewCampaignPage') },
      { path: 'campaigns/:id', lazy: () => import('../pages/campaigns/CampaignPage') },
      { path: 'numbers', lazy: () => import('../pages/numbers/NumbersPage') },
      { path: 'numbers/buy', lazy: () => import('../pages/numbers/BuyNumberPage') },
      { path: 'settings/webhooks', lazy: () => import('../pages/webhooks/WebhooksPage') },
      { path: 'settings/webhooks/:id', lazy: () => import('../pages/webhooks/WebhookPage') },
      { path: 'settings/api-keys', lazy: () => import('../pages/settings/ApiKeysPage') },
      { path: 'chat', lazy: () => import('../pages/chat/ChatPage') },
      { path: 'audit', lazy: () => import('../pages/audit/AuditLogPage') },
      { path: 'admin', lazy: () => import('../pages/admin/AdminCallsPage') },
      { path: 'admin/calls/:id', lazy: () => import('../pages/admin/AdminCallPage') },
      { path: '*', lazy: () => import('../pages/NotFound') },
    ],
  },
]);

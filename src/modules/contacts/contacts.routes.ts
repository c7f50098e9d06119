import type { App } from '../../http/types.js';
import type { Services } from '../../services.js';

// Placeholder: the contacts module registers its routes here.
export function contactsRoutes(_app: App, _services: Services) {}

import type { App } from '../../http/types.js';
import type { Services } from '../../services.js';

// Placeholder: the calls module registers its routes here.
export function callsRoutes(_app: App, _services: Services) {}

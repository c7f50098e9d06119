import type { App } from '../../http/types.js';
import type { Services } from '../../services.js';

// Placeholder: the agents module registers its routes here.
export function agentsRoutes(_app: App, _services: Services) {}

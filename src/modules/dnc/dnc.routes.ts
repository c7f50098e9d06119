import type { App } from '../../http/types.js';
import type { Services } from '../../services.js';

// Placeholder: the dnc module registers its routes here.
export function dncRoutes(_app: App, _services: Services) {}

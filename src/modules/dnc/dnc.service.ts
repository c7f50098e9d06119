import type { Db } from '../../db/client.js';
import type { Config } from '../../config.js';
import type { Clock } from '../../lib/clock.js';

// Placeholder: the dnc module builds its service here.
export function createDncService(_deps: { db: Db; config: Config; clock: Clock }) {
  return {};
}

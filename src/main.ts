import { parseArgs } from 'node:util';
import { loadConfig, type Role } from './config.js';
import { buildApp } from './app.js';
import { systemClock } from './lib/clock.js';
import { openInfrastructure } from './runtime.js';

const { values } = parseArgs({ options: { role: { type: 'string', default: 'all' } } });
const role = values.role as Role;
if (!['all', 'api', 'worker', 'migrate'].includes(role)) {
  console.error(`--role must be one of all, api, worker, migrate (got "${role}")`);
  process.exit(2);
}

const config = loadConfig();
const infra = await openInfrastructure(config);
if (role === 'migrate') {
  await infra.close();
  console.log('migrations applied');
  process.exit(0);
}

const { app } = await buildApp({ config, ...infra, clock: systemClock });
await app.listen({ host: config.host, port: config.port });

async function shutdown(signal: string) {
  app.log.info({ signal }, 'shutting down');
  await app.close();
  await infra.close();
  process.exit(0);
}
process.once('SIGTERM', () => void shutdown('SIGTERM'));
process.once('SIGINT', () => void shutdown('SIGINT'));

/**
 * Operator commands, run from a shell on the server's machine:
 *   npm run admin -- create-user <email>
 *   npm run admin -- grant-platform-admin <email>
 *   npm run admin -- revoke-platform-admin <email>
 * They open the storage the server uses (DATABASE_URL, else DATA_DIR). The embedded database belongs to one
 * process, so on it stop the server first. Exit codes: 0 done, 2 bad usage or no such user, 1 anything else.
 */
import { pino } from 'pino';
import { ConfigError, loadConfig, loadDotEnv, type Config } from './config.js';
import { systemClock } from './lib/clock.js';
import { createMemoryCounterStore } from './lib/counter-store.js';
import { createLocalBus } from './lib/invalidation-bus.js';
import { createServices } from './services.js';
import { AppError } from './lib/errors.js';
import { createLocalBroadcast } from './lib/broadcast.js';
import { createProviders, DataDirInUseError, openStorage, StartupError } from './runtime.js';

const USAGE = `Usage:
  npm run admin -- grant-platform-admin <email>    let the user call the administration routes (/v1/admin/...)
  npm run admin -- revoke-platform-admin <email>   take that away again
  npm run admin -- create-user <email>             create a user and its account, and print its password`;

const COMMANDS = ['grant-platform-admin', 'revoke-platform-admin', 'create-user'] as const;
type Command = (typeof COMMANDS)[number];

function exit(message: string, code: number): never {
  (code === 0 ? console.log : console.error)(message);
  process.exit(code);
}

const [command, email, ...extra] = process.argv.slice(2);
if (!command || !COMMANDS.includes(command as Command) || !email || extra.length > 0) exit(USAGE, 2);

let config: Config;
try {
  loadDotEnv();
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) exit(`Configuration error: ${error.message}`, 2);
  throw error;
}

// Warnings and errors only, on stderr: stdout carries the one sentence the command answers.
const log = pino({ level: 'warn' }, pino.destination(2));
const storage = await openStorage(config, { log }).catch((error: unknown) => {
  if (error instanceof DataDirInUseError) exit(error.message, 1);
  if (error instanceof StartupError) exit(error.message, 2);
  log.fatal({ err: error }, 'could not open the database');
  process.exit(1);
});

let message = '';
let code = 0;
try {
  const services = createServices({
    config,
    ...storage,
    redis: null,
    counters: createMemoryCounterStore(),
    bus: createLocalBus({ singleProcess: true }),
    broadcast: createLocalBroadcast(),
    providers: await createProviders(config),
    clock: systemClock,
  });
  if (command === 'create-user') {
    ({ message, code } = await createUser(services.auth, email));
  } else {
    ({ message, code } = await setPlatformAdmin(services.auth, email, command === 'grant-platform-admin'));
  }
} catch (error) {
  log.fatal({ err: error }, `${command} failed`);
  await storage.close();
  process.exit(1);
}
await storage.close();
exit(message, code);

type Services = ReturnType<typeof createServices>;

async function createUser(auth: Services['auth'], email: string) {
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254) {
    return { message: `"${email}" is not an email address.`, code: 2 };
  }
  try {
    const created = await auth.createUser({ email });
    return {
      message: `Created ${created.email} with the password ${created.password} (account ${created.accountId}); they can change it after signing in.`,
      code: 0,
    };
  } catch (error) {
    if (error instanceof AppError && error.code === 'conflict')
      return { message: `A user with the email ${email} already exists.`, code: 2 };
    throw error;
  }
}

async function setPlatformAdmin(auth: Services['auth'], email: string, grant: boolean) {
  let message: string;
  let code = 0;
  const result = await auth.setPlatformAdmin(email, grant);
  if (!result) {
    message = `No user has the email ${email}. They sign up first (POST /api/v1/auth/register), then you run this again.`;
    code = 2;
  } else if (grant) {
    message = result.changed
      ? `${result.email} is now a platform administrator; it takes effect on their next request.`
      : `${result.email} was already a platform administrator; nothing changed.`;
  } else {
    message = result.changed
      ? `${result.email} is no longer a platform administrator; it takes effect on their next request.`
      : `${result.email} was not a platform administrator; nothing changed.`;
  }
  return { message, code };
}

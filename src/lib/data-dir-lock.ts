import { randomUUID } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * PGlite does not stop a second process from opening the same data directory, and two writers would corrupt it;
 * a lock file does. It holds the holder's pid on its first line and a token naming this very lock on the second.
 * Every step is atomic, so of several processes starting at once exactly one gets the directory:
 * - create: the content is written to a file of its own and link()ed into place, which fails if a lock exists
 *   (and nobody ever reads a half-written lock);
 * - take over a lock whose process is gone (a crash, kill -9): only the starter that creates the claim file named
 *   after that lock's token (O_EXCL) may rename its own lock over it.
 */
export class DataDirInUseError extends Error {}

const LOCK_FILE = 'parley.pid';
// Gives up after this many rounds of a lock changing under us (only when starts and exits keep racing).
const MAX_ATTEMPTS = 10;
// Directories locked by this process; a lock file naming our own pid but absent here is left from a
// previous run that happened to get the same pid (PID 1 in a restarted container).
const heldLocks = new Set<string>();

interface LockContent {
  pid: number;
  token: string;
  raw: string;
}

function processIsAlive(pid: number) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Our own pid in a lock we do not hold is a previous run's (lockDataDir refuses a directory this process holds). */
const holderIsGone = (pid: number) => pid === process.pid || !processIsAlive(pid);

const errorCode = (error: unknown) => (error as NodeJS.ErrnoException).code;

/** The lock file's content, or null if there is none. */
function readLock(path: string): LockContent | null {
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return null;
    throw error;
  }
  const [pid = '', token = ''] = raw.split('\n');
  return { pid: Number(pid.trim()), token: token.trim(), raw };
}

function inUse(dataDir: string, pid: number) {
  return new DataDirInUseError(
    `Data directory ${dataDir} is in use by process ${pid}. Stop that process first; ` +
      'to run several processes on one database, use PostgreSQL (DATABASE_URL).',
  );
}

/** O_EXCL: creates the file with `content`, or answers false if it exists. */
function writeNew(path: string, content: string): boolean {
  try {
    writeFileSync(path, content, { flag: 'wx' });
    return true;
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    throw error;
  }
}

/** Puts `content` at `path` whole, unless a file is there; answers false if one is. */
function createLock(path: string, content: string, token: string): boolean {
  const fresh = `${path}.${token}`;
  writeFileSync(fresh, content, { flag: 'wx' });
  try {
    linkSync(fresh, path);
    return true;
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    if (!['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS'].includes(errorCode(error) ?? '')) throw error;
  } finally {
    rmSync(fresh, { force: true });
  }
  // A file system without hard links: O_EXCL still lets one process create the lock; its content follows at once.
  return writeNew(path, content);
}

/**
 * Replaces the stale lock at `path` by `content`, for one starter only: the one that creates the claim file named
 * after the stale lock renames the claim over it (atomic: the lock never goes missing). Answers false if the lock
 * changed meanwhile (another starter took it over first); the caller looks again. A claim left by a starter that
 * died in between is stale too, and is taken over the same way.
 */
function replaceStaleLock(dataDir: string, path: string, stale: LockContent, content: string): boolean {
  const claim = `${path}.takeover-${stale.token || `pid${stale.pid}`}`;
  let claimed = false;
  for (let attempt = 0; attempt < MAX_ATTEMPTS && !claimed; attempt++) {
    // Written whole (link, not O_EXCL then write): a rival must never read a claim half written and take it for dead.
    if (createLock(claim, content, randomUUID())) {
      claimed = true;
      break;
    }
    const claimant = readLock(claim);
    // Its starter just renamed it into place: claim again, then see that the lock changed.
    if (!claimant) continue;
    // A live starter is about to hold the directory.
    if (!holderIsGone(claimant.pid)) throw inUse(dataDir, claimant.pid);
    claimed = replaceStaleLock(dataDir, claim, claimant, content);
  }
  if (!claimed) return false;
  if (readLock(path)?.raw !== stale.raw) {
    rmSync(claim, { force: true });
    return false;
  }
  renameSync(claim, path);
  return true;
}

/** Locks the data directory for this process; answers the release. Throws DataDirInUseError if another has it. */
export function lockDataDir(dataDir: string): () => void {
  const path = join(resolve(dataDir), LOCK_FILE);
  if (heldLocks.has(path)) throw new DataDirInUseError(`Data directory ${dataDir} is already open in this process`);
  mkdirSync(dataDir, { recursive: true });
  const token = randomUUID();
  const content = `${process.pid}\n${token}\n`;
  const hold = () => {
    heldLocks.add(path);
    return () => {
      heldLocks.delete(path);
      // Only ever remove our own lock.
      if (readLock(path)?.token === token) rmSync(path, { force: true });
    };
  };
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    if (createLock(path, content, token)) return hold();
    const holder = readLock(path);
    if (!holder) continue; // released meanwhile
    if (!holderIsGone(holder.pid)) throw inUse(dataDir, holder.pid);
    if (replaceStaleLock(dataDir, path, holder, content)) return hold();
  }
  throw new DataDirInUseError(
    `Could not lock data directory ${dataDir}: other processes keep starting and stopping on it`,
  );
}

/**
 * What the tests that start real processes share: how to start node on the TypeScript sources, and when such a
 * test runs.
 */
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Node's arguments to run a TypeScript entry point as `npm start` does (`node --import tsx`), with the dependencies
 * loaded first without tsx's loader (scripts/preload-dependencies.mjs): the same program, started in about two
 * thirds of the time. Absolute, so a start from another working directory finds them.
 */
export const NODE_ARGS = [
  '--import',
  fileURLToPath(new URL('../scripts/preload-dependencies.mjs', import.meta.url)),
  '--import',
  import.meta.resolve('tsx'),
];

/**
 * The skip of a test of a process's own behaviour (its start, signals, messages, exit codes) on the embedded
 * database: that behaviour is the same whatever the storage, so it runs once, in the PGlite pass, and not again
 * when DATABASE_URL points the suite at PostgreSQL. Tests of what PostgreSQL or Redis change (processes sharing a
 * database) run in that pass instead.
 */
export const PGLITE_PASS_ONLY: string | false = process.env.DATABASE_URL
  ? "a process's own behaviour, on the embedded database: run in the PGlite pass"
  : false;

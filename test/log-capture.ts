/**
 * An app that logs, over the database and stores of a test app (whose own app logs nothing), with every line it
 * writes kept: for tests of what reaches the log. Built as main.ts builds it: around a logger instance.
 */
import { pino, type Level } from 'pino';
import { buildApp } from '../src/app.js';
import type { Config } from '../src/config.js';
import { systemClock } from '../src/lib/clock.js';
import type { TestApp } from './helpers.js';

export interface LogLine {
  level: number;
  msg: string;
  err?: { type?: string; message?: string; stack?: string };
  req?: { url?: string };
  [key: string]: unknown;
}

/** pino's numbers for its levels. */
export const LEVELS = { debug: 20, info: 30, warn: 40, error: 50 } as const;

export async function loggingApp(t: TestApp, options: { level?: Level; config?: Partial<Config> } = {}) {
  const raw: string[] = [];
  const logger = pino({ level: options.level ?? 'debug' }, { write: (line: string) => void raw.push(line) });
  const { app } = await buildApp({
    ...t.infra,
    config: { ...t.config, ...options.config },
    clock: systemClock,
    loggerInstance: logger,
  });
  await app.ready();
  return {
    app,
    /** Every line written so far, raw (as a log collector reads them). */
    raw,
    /** Every line written so far, parsed. */
    lines: () => raw.map((line) => JSON.parse(line) as LogLine),
    close: () => app.close(),
  };
}

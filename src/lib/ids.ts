import { randomUUID } from 'node:crypto';

/** Every id the service hands out is a random UUID (v4). */
export const newId = (): string => randomUUID();

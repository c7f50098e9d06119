/**
 * Worker threads that run under tsx (.ts, in development and tests) and compiled (.js) alike. A worker thread does
 * not inherit tsx's loader: under tsx it starts from a bootstrap that registers the loader, then imports the module.
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/** The URL of a module next to `base` (an import.meta.url), with base's own extension (.ts or .js). */
export function siblingModule(base: string, name: string): URL {
  return new URL(`./${name}${extname(fileURLToPath(base))}`, base);
}

export function startWorker(url: URL): Worker {
  if (extname(fileURLToPath(url)) !== '.ts') return new Worker(url);
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url.href)}); })`;
  return new Worker(bootstrap, { eval: true });
}

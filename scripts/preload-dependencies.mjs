// Loaded with --import before tsx: imports every runtime dependency natively, so that when the tests import
// them later, through tsx's loader, each package is already loaded. A module loaded through the loader costs
// two to three times as much (its hooks run in another thread, once per file: kysely and typebox alone are
// about a thousand files), and every test file pays that again in a process of its own.
import { readFileSync } from 'node:fs';

const { dependencies } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
// tsx's own entry point would register its loader here, ahead of time.
const names = Object.keys(dependencies).filter((name) => name !== 'tsx');
// A package that cannot be imported on its own is simply left to the tests.
await Promise.all(names.map((name) => import(name).catch(() => undefined)));

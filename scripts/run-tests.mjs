// Finds every *.test.ts under src/ and test/ and runs them with Node's own test runner.
// (Node 20's --test does not expand globs itself.) --test-force-exit: a file whose tests are done but that
// leaves a handle open must not hang CI; --test-timeout bounds any single test.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function findTests(dir) {
  let found = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) found = found.concat(findTests(path));
    else if (entry.endsWith('.test.ts')) found.push(path);
  }
  return found;
}

const filter = process.argv.slice(2);
let files = ['src', 'test'].flatMap(findTests).sort();
if (filter.length) files = files.filter((f) => filter.some((word) => f.includes(word)));
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', '--test-force-exit', '--test-timeout=300000', ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);

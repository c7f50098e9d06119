// `npm run build`: compiles src/ to dist/ and copies every other file of src/ the compiled code reads at run time
// (SQL migrations, the docs logo, data tables), so a new asset needs no change here.
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
cpSync(new URL('../src', import.meta.url), new URL('../dist', import.meta.url), {
  recursive: true,
  filter: (source) => !source.endsWith('.ts'),
});
console.log('built dist/ (run: node dist/main.js)');

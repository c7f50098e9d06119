// `npm run build`: compiles src/ to dist/ and copies every other file of src/ the compiled code reads at run time
// (SQL migrations, the docs logo, data tables), so a new asset needs no change here; then builds the dashboard into
// web/dist/ unless it is already built from the same sources (scripts/web.mjs).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, rmSync } from 'node:fs';
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
if (existsSync(new URL('../web/index.html', import.meta.url))) {
  execFileSync(process.execPath, ['scripts/web.mjs', 'ensure'], { cwd: root, stdio: 'inherit' });
} else {
  console.log('no web/ here: the dashboard is not built, and / says so (the API is complete without it)');
}

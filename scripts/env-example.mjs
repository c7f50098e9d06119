// Writes .env.example from the README's configuration table, so the two never disagree: `node scripts/env-example.mjs`.
import { readFileSync, writeFileSync } from 'node:fs';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const start = readme.indexOf('## Configuration');
const section = readme.slice(start, readme.indexOf('\n## ', start + 5));
const header = `# Parley's settings. Copy this file to .env and change what you need: \`npm start\` reads .env from the working
# directory at start (variables already set in the environment win). Every line is commented out, so the defaults
# apply; the README's Configuration section says more.
`;
const plain = (cell) =>
  cell
    .replace(/`/g, '')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .trim();
const entries = [];
for (const match of section.matchAll(/^\| `([A-Z0-9_]+)` \| ([^|]*) \| (.*) \|$/gm)) {
  const [, name, fallback, description] = match;
  // A default that is a single value is written as the example; "—" or a sentence leaves the value empty.
  const value = plain(fallback);
  const example = value === '—' || /\s/.test(value) || value.includes('DATA_DIR') ? '' : value;
  entries.push(`# ${plain(description)}\n# ${name}=${example}\n`);
}
writeFileSync(new URL('../.env.example', import.meta.url), `${header}\n${entries.join('\n')}`);
console.log(`.env.example: ${entries.length} variables`);

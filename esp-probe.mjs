import ESpeakNg from 'espeak-ng';
import { readFile } from 'node:fs/promises';
const wasmUrl = new URL('espeak-ng.wasm', import.meta.resolve('espeak-ng'));
const mod = await WebAssembly.compile(await readFile(wasmUrl));
const patch = process.argv[2] === 'patch';
let files = 0, paths = 0;
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const runs = [];
let firstWav;
for (let i=0;i<15;i++){
  const text = Buffer.from('Hi, this is Sam from Acme Dental.');
  let p=0;
  const c0 = cpu();
  const m = await ESpeakNg({ arguments: ['-v','en-us','-w','/o.wav','--stdin'], stdin: ()=> p<text.length?text[p++]:null, print: ()=>{}, printErr: ()=>{},
  preRun: [(M) => { if (!patch) return; const FS = M.FS; const made = new Set(); const original = FS.createPath; FS.createPath = function (parent, path, canRead, canWrite) { paths++; const key = `${parent}\0${path}`; if (made.has(key)) return; made.add(key); return original.call(this, parent, path, canRead, canWrite); }; }],
  instantiateWasm(imports, cb){ WebAssembly.instantiate(mod, imports).then(inst=>{ const l=Error.stackTraceLimit; Error.stackTraceLimit=0; try { cb(inst, mod) } finally { Error.stackTraceLimit=l } }); return {}; } });
  runs.push(cpu() - c0);
  const wav = Buffer.from(m.FS.readFile('/o.wav'));
  if (!firstWav) firstWav = wav; else if (!wav.equals(firstWav)) throw new Error('differs');
}
runs.sort((a,b)=>a-b);
console.log(patch ? 'patched' : 'plain', 'median cpu ms', runs[7].toFixed(0), 'createPath calls/run', paths/15);

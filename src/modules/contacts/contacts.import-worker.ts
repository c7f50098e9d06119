/** Worker thread body: reads one import's rows after another (see contacts.import-threads.ts for the exchange). */
import { parentPort } from 'node:worker_threads';
import { readImportRows, type ImportRowsOptions } from './contacts.import-rows.js';
import {
  BATCHES_AHEAD,
  CHUNKS_AHEAD,
  serializeError,
  type FromWorker,
  type ToWorker,
} from './contacts.import-threads.js';

const port = parentPort!;
const send = (message: FromWorker) => port.postMessage(message);

/** The current file: chunks received and not yet parsed, how many more are asked for, batches not yet taken. */
let chunks: Array<Uint8Array | string> = [];
let ended = false;
let asked = 0;
let untaken = 0;
let wake: (() => void) | null = null;

function notify() {
  wake?.();
  wake = null;
}

const waitFor = () =>
  new Promise<void>((resolve) => {
    wake = resolve;
  });

function askForMore() {
  while (!ended && chunks.length + asked < CHUNKS_AHEAD) {
    asked++;
    send({ type: 'need' });
  }
}

async function* received(): AsyncGenerator<Uint8Array | string> {
  for (;;) {
    askForMore();
    const chunk = chunks.shift();
    if (chunk !== undefined) {
      yield chunk;
      continue;
    }
    if (ended) return;
    await waitFor();
  }
}

async function run(options: ImportRowsOptions) {
  chunks = [];
  ended = false;
  asked = 0;
  untaken = 0;
  try {
    for await (const batch of readImportRows(received(), options)) {
      untaken++;
      send({ type: 'batch', batch });
      while (untaken >= BATCHES_AHEAD) await waitFor();
    }
  } catch (error) {
    send({ type: 'failed', error: serializeError(error) });
  }
}

port.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'start':
      void run(message.options);
      break;
    case 'chunk':
      asked--;
      chunks.push(message.chunk);
      notify();
      break;
    case 'end':
      asked--;
      ended = true;
      notify();
      break;
    case 'taken':
      untaken--;
      notify();
      break;
  }
});

/** Worker thread body: normalizes batches of phone numbers off the main thread (see phone-pool.ts). */
import { parentPort } from 'node:worker_threads';
import { normalizePhone } from './phone.js';

parentPort!.on('message', (message: { id: number; phones: string[]; defaultCountry: string }) => {
  const results = message.phones.map((phone) => normalizePhone(phone, message.defaultCountry));
  parentPort!.postMessage({ id: message.id, results });
});

/**
 * The demo account: a user to sign in as, two agents, a contact list, a bought number and one call for every persona
 * and network outcome of the simulated network, made through the HTTP API exactly as a client would. Running it
 * again finds the account and changes nothing.
 */
import { demoAgents } from './demo-agents.js';

export const DEMO_LOGIN = { email: 'demo@parley.example', password: 'parley demo password' };

/**
 * One contact per outcome worth seeing; the sim decides by the number (last digit: outcome, second-to-last: the
 * persona of a person who answers). The longest calls come first, so the calls that wait for a free slot (an account
 * runs five at once) are the short ones.
 */
export const DEMO_CONTACTS = [
  { firstName: 'Ada', lastName: 'Lovelace', phone: '+14155550100', outcome: 'interested' },
  { firstName: 'Grace', lastName: 'Hopper', phone: '+14155550111', outcome: 'hesitant' },
  { firstName: 'Margaret', lastName: 'Hamilton', phone: '+14155550127', outcome: 'no answer' },
  { firstName: 'Barbara', lastName: 'Liskov', phone: '+14155550105', outcome: 'voicemail' },
  { firstName: 'Katherine', lastName: 'Johnson', phone: '+14155550122', outcome: 'asks to be called back' },
  { firstName: 'Alan', lastName: 'Turing', phone: '+14155550133', outcome: 'not interested' },
  { firstName: 'Edsger', lastName: 'Dijkstra', phone: '+14155550144', outcome: 'asks not to be called again' },
  { firstName: 'Donald', lastName: 'Knuth', phone: '+14155550116', outcome: 'busy' },
] as const;

/** The appointment the reminder agent talks about (its {{appointmentTime}} blank reads this column). */
const APPOINTMENT_TIME = 'Thursday at 10 am';

/** How to see the demo's calls from a shell, in three commands (sign in, make a key, list the calls); as the README has them. */
export function demoCommands(apiUrl: string): string[] {
  const { email, password } = DEMO_LOGIN;
  const json = "-H 'content-type: application/json'";
  return [
    `curl -s -c demo.jar ${json} -d '{"email":"${email}","password":"${password}"}' ${apiUrl}/v1/auth/login`,
    `KEY=$(curl -s -b demo.jar ${json} -d '{"name":"demo"}' ${apiUrl}/v1/api-keys | sed -E 's/.*"key":"([^"]+)".*/\\1/')`,
    `curl -s '${apiUrl}/v1/calls?limit=25' -H "authorization: Bearer $KEY"`,
  ];
}

interface InjectResponse {
  statusCode: number;
  body: string;
  json(): any;
  cookies: Array<{ name: string; value: string }>;
}

/** What the demo needs of the app: Fastify's inject. */
export interface Injectable {
  inject(options: {
    method: string;
    url: string;
    headers?: Record<string, string>;
    payload?: string | object;
  }): Promise<InjectResponse>;
}

export interface DemoResult {
  created: boolean;
  email: string;
  password: string;
  calls: string[];
}

export class DemoError extends Error {}

export async function seedDemo(app: Injectable): Promise<DemoResult> {
  const send = async (method: string, url: string, headers: Record<string, string>, payload?: string | object) => {
    const response = await app.inject({
      method,
      url: `/api/v1${url}`,
      headers,
      ...(payload === undefined ? {} : { payload }),
    });
    return response;
  };
  const ok = async (method: string, url: string, headers: Record<string, string>, payload?: string | object) => {
    const response = await send(method, url, headers, payload);
    if (response.statusCode !== 200)
      throw new DemoError(`The demo could not ${method} ${url}: ${response.statusCode} ${response.body}`);
    return response.json();
  };

  const register = await send(
    'POST',
    '/auth/register',
    {},
    { ...DEMO_LOGIN, name: 'Demo', accountName: 'Demo account' },
  );
  if (register.statusCode === 409) return { created: false, ...DEMO_LOGIN, calls: [] };
  if (register.statusCode !== 200) {
    throw new DemoError(
      `The demo account could not be created (${register.statusCode}): ${register.json().message ?? register.body}`,
    );
  }
  const session = { cookie: `vsid=${register.cookies.find((c) => c.name === 'vsid')!.value}` };
  const { key } = await ok('POST', '/api-keys', session, { name: 'demo' });
  const auth = { authorization: `Bearer ${key}` };

  const agents: string[] = [];
  for (const body of demoAgents()) agents.push((await ok('POST', '/agents/from-template', auth, body)).id);
  await ok('POST', '/phone-numbers/inventory/purchase', auth, { country: 'US', areaCode: '415' });

  const csv = [
    'First Name,Last Name,Phone Number,Notes,Appointment Time',
    ...DEMO_CONTACTS.map((c) => `${c.firstName},${c.lastName},${c.phone},${c.outcome},${APPOINTMENT_TIME}`),
  ].join('\n');
  const imported = await ok(
    'POST',
    '/contact-lists?name=Demo%20leads&defaultCountry=US',
    { ...auth, 'content-type': 'text/csv' },
    csv,
  );
  const listed = await ok('GET', `/contacts?listId=${imported.listId}&limit=100`, auth);

  // In the order above, the two agents taking turns: the setter books the interested caller, the reminder agent's
  // refusal is a cancelled appointment.
  const contacts = listed.contacts as Array<{ id: string; phone: string }>;
  const position = (phone: string) => DEMO_CONTACTS.findIndex((c) => c.phone === phone);
  contacts.sort((a, b) => position(a.phone) - position(b.phone));
  const calls: string[] = [];
  for (const [i, contact] of contacts.entries()) {
    const placed = await ok('POST', `/crm/contacts/${contact.id}/call`, auth, { agentId: agents[i % agents.length] });
    calls.push(placed.callId);
  }
  return { created: true, ...DEMO_LOGIN, calls };
}

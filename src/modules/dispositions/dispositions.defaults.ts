import type { DispositionCategory } from './dispositions.tables.js';

export interface DefaultDisposition {
  code: string;
  label: string;
  description: string;
  category: DispositionCategory;
  /** The call engine sets this code by itself: it can be relabelled, never deleted or turned off. */
  system: boolean;
}

/**
 * The set every account starts with. The system codes are the outcomes the engine reaches on its own: the
 * playbook engine ends calls as interested, not_interested, callback_requested, do_not_call or voicemail, a callee
 * who hangs up first gives hung_up, and the network and transfers give no_answer, busy, failed and transferred.
 */
export const DEFAULT_DISPOSITIONS: readonly DefaultDisposition[] = [
  {
    code: 'interested',
    label: 'Interested',
    category: 'positive',
    system: true,
    description: 'The contact wants to hear more or agreed to the offer.',
  },
  {
    code: 'appointment_booked',
    label: 'Appointment booked',
    category: 'positive',
    system: false,
    description: 'A meeting or demo was booked.',
  },
  {
    code: 'transferred',
    label: 'Transferred',
    category: 'positive',
    system: true,
    description: 'The call was handed to a person.',
  },
  {
    code: 'callback_requested',
    label: 'Callback requested',
    category: 'neutral',
    system: true,
    description: 'The contact asked to be called back later.',
  },
  {
    code: 'voicemail',
    label: 'Voicemail',
    category: 'neutral',
    system: true,
    description: 'An answering machine or voicemail picked up.',
  },
  {
    code: 'hung_up',
    label: 'Hung up',
    category: 'neutral',
    system: true,
    description: 'The contact hung up before the agent ended the call.',
  },
  { code: 'no_answer', label: 'No answer', category: 'neutral', system: true, description: 'Nobody picked up.' },
  { code: 'busy', label: 'Busy', category: 'neutral', system: true, description: 'The line was busy.' },
  {
    code: 'failed',
    label: 'Failed',
    category: 'neutral',
    system: true,
    description: 'The call could not be connected.',
  },
  {
    code: 'not_interested',
    label: 'Not interested',
    category: 'negative',
    system: true,
    description: 'The contact declined.',
  },
  {
    code: 'not_qualified',
    label: 'Not qualified',
    category: 'negative',
    system: false,
    description: 'The contact is not a fit for the offer.',
  },
  {
    code: 'wrong_number',
    label: 'Wrong number',
    category: 'negative',
    system: false,
    description: 'The number does not belong to the contact.',
  },
  {
    code: 'do_not_call',
    label: 'Do not call',
    category: 'compliance',
    system: true,
    description: 'The contact asked never to be called again.',
  },
];

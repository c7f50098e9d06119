/**
 * A status callback's parameters (CallStatus, SipResponseCode, AnsweredBy, CallDuration) in Parley's terms: the call
 * is still dialing, ringing or connected, or it ended completed, busy, unanswered or failed (the statuses the call
 * engine records, and the DialResult statuses of the voice port).
 */

export const TWILIO_CALL_STATUSES = [
  'queued',
  'initiated',
  'ringing',
  'in-progress',
  'completed',
  'busy',
  'no-answer',
  'failed',
  'canceled',
] as const;
export type TwilioCallStatus = (typeof TWILIO_CALL_STATUSES)[number];

export type AnsweredBy = 'human' | 'machine';

export type CallProgressUpdate =
  | { phase: 'live'; status: 'dialing' | 'ringing' }
  | { phase: 'live'; status: 'connected'; answeredBy: AnsweredBy }
  | {
      phase: 'ended';
      status: 'completed' | 'busy' | 'no_answer' | 'failed';
      /** Why, in words for the call's timeline; `canceled` when we hung up before an answer. */
      reason: string;
      durationSeconds: number;
      sipResponseCode: number | null;
    };

export type CallStatusProblem = { phase: 'invalid'; message: string };

const number = (text: string | undefined): number | null => {
  if (text === undefined || !/^[0-9]+$/.test(text)) return null;
  return Number(text);
};

/**
 * Answering-machine detection: `human`, `unknown` (taken as a person: better to speak to a machine than leave a
 * voicemail on a person), `machine_start`, `machine_end_beep`, `machine_end_silence`, `machine_end_other` and `fax`.
 */
export function answeredByFrom(value: string | undefined): AnsweredBy {
  return value?.startsWith('machine_') || value === 'fax' ? 'machine' : 'human';
}

/** SIP answers that mean busy or unanswered even when the carrier reports `failed`. */
const SIP_BUSY = new Set([486, 600, 603]);
const SIP_NO_ANSWER = new Set([408, 480, 487]);

/** A status callback (its form parameters) as a progress update, or why it cannot be read. */
export function callProgressFromStatusCallback(
  params: Readonly<Record<string, string | undefined>>,
): CallProgressUpdate | CallStatusProblem {
  const status = params.CallStatus;
  if (!status || !(TWILIO_CALL_STATUSES as readonly string[]).includes(status)) {
    return { phase: 'invalid', message: `Unknown CallStatus "${String(status ?? '').slice(0, 40)}".` };
  }
  const sipResponseCode = number(params.SipResponseCode);
  const durationSeconds = number(params.CallDuration) ?? 0;
  const ended = (outcome: 'completed' | 'busy' | 'no_answer' | 'failed', reason: string): CallProgressUpdate => ({
    phase: 'ended',
    status: outcome,
    reason,
    durationSeconds,
    sipResponseCode,
  });
  const sip = sipResponseCode === null ? '' : ` (SIP ${sipResponseCode})`;

  switch (status as TwilioCallStatus) {
    case 'queued':
    case 'initiated':
      return { phase: 'live', status: 'dialing' };
    case 'ringing':
      return { phase: 'live', status: 'ringing' };
    case 'in-progress':
      return { phase: 'live', status: 'connected', answeredBy: answeredByFrom(params.AnsweredBy) };
    case 'completed':
      return ended('completed', 'The call ended.');
    case 'busy':
      return ended('busy', `The line is busy${sip}.`);
    case 'no-answer':
      return ended('no_answer', `Nobody answered${sip}.`);
    case 'canceled':
      return ended('failed', 'canceled');
    case 'failed':
      if (sipResponseCode !== null && SIP_BUSY.has(sipResponseCode)) return ended('busy', `The line is busy${sip}.`);
      if (sipResponseCode !== null && SIP_NO_ANSWER.has(sipResponseCode))
        return ended('no_answer', `Nobody answered${sip}.`);
      return ended('failed', `The call could not be connected${sip}.`);
  }
}

/**
 * The people the simulated network puts on the line. Each persona answers the agent from a short script, one line
 * per turn, and reacts to a few things whatever its script (a goodbye, "are you still there?"). Deterministic: the
 * same words from the agent always get the same answer.
 */
export const SIM_PERSONAS = ['interested', 'hesitant', 'callback', 'not_interested', 'stop_calling'] as const;
export type SimPersona = (typeof SIM_PERSONAS)[number];

interface PersonaScript {
  /** Said on picking up, when the agent waits for the other side to speak first. */
  greeting: string;
  /** Said on calling in (inbound), when the agent waits. */
  callingIn: string;
  /** One line per turn; `{name}` is the person's first name. After the last line the person says goodbye and hangs up. */
  lines: string[];
}

export const PERSONA_SCRIPTS: Record<SimPersona, PersonaScript> = {
  interested: {
    greeting: 'Hello?',
    callingIn: 'Hi, I saw your offer and I would like to hear more.',
    lines: [
      'Yes, this is {name}. Sure, I have a minute.',
      'Oh, that sounds interesting. How much does it cost?',
      'Okay, that sounds good. Yes, I would like that.',
      "Yes, let's do it. Sign me up!",
    ],
  },
  hesitant: {
    greeting: 'Hello, who is this?',
    callingIn: 'Hi, I got a call from this number. What is it about?',
    lines: [
      'Yes, speaking. I have a minute, I guess.',
      "Hmm, I'm not sure. It sounds too expensive for us.",
      "I don't know. We already use another provider.",
      'Could I speak to a real person about this?',
      "Okay, yes, I'd like that.",
    ],
  },
  callback: {
    greeting: 'Hello, yes?',
    callingIn: 'Hi, you called me earlier, but this is a bad time.',
    lines: ["Sorry, I'm in a meeting right now. Can you call me back tomorrow?"],
  },
  not_interested: {
    greeting: 'Yes, who is this?',
    callingIn: 'Hi, I got a call from this number.',
    lines: ["No thanks, I'm not interested.", "I said I'm not interested. Goodbye."],
  },
  stop_calling: {
    greeting: 'Who is this?',
    callingIn: 'Hi, you keep calling this number.',
    lines: ['Please stop calling me. Take me off your list.'],
  },
};

const GOODBYE = /\b(?:bye|goodbye)\b/i;
const STILL_THERE = /still there|are you there|can you hear me/i;
const TRANSFERRING = /\b(?:transfer(?:ring)?|connect(?:ing)? you|put you through)\b/i;

/** One person's side of one conversation. */
export class PersonaConversation {
  private next = 0;
  private saidGoodbye = false;
  private silences = 0;

  constructor(
    readonly persona: SimPersona,
    private readonly firstName: string | null,
  ) {}

  private fill(line: string): string {
    return line.replace('{name}', this.firstName ?? 'me').replace('this is me', 'speaking');
  }

  greeting(direction: 'outbound' | 'inbound'): string {
    const script = PERSONA_SCRIPTS[this.persona];
    return direction === 'inbound' ? script.callingIn : script.greeting;
  }

  /** The answer to the agent's words, or null: the person hangs up. */
  answer(agentText: string): string | null {
    if (this.saidGoodbye) return null;
    const heard = agentText.trim();
    if (!heard) {
      if (++this.silences > 1) return null;
      return 'Hello? Are you there?';
    }
    if (GOODBYE.test(heard)) {
      this.saidGoodbye = true;
      return 'Bye.';
    }
    if (STILL_THERE.test(heard)) return "Yes, I'm still here.";
    if (TRANSFERRING.test(heard)) return 'Okay, thank you.';
    const lines = PERSONA_SCRIPTS[this.persona].lines;
    if (this.next < lines.length) return this.fill(lines[this.next++]!);
    // Past the script: a polite goodbye, then the line goes quiet.
    this.saidGoodbye = true;
    return this.persona === 'stop_calling' ? null : 'Okay. Thank you, bye.';
  }
}

/** The voicemail greeting of an answering machine; a beep follows it. */
export function voicemailGreeting(firstName: string | null): string {
  return `Hi, you've reached ${firstName ?? 'this number'}. I can't take your call right now. Please leave a message after the beep.`;
}

/**
 * The people the simulated network puts on the line. Each persona answers the agent from a short script, one line
 * per turn, and reacts to a few things whatever its script (a goodbye, "are you still there?"). Deterministic: the
 * same words from the agent always get the same answer.
 */
export const SIM_PERSONAS = ['interested', 'hesitant', 'callback', 'not_interested', 'stop_calling'] as const;
export type SimPersona = (typeof SIM_PERSONAS)[number];

interface PersonaScript {
  /** Said on picking up an outbound call, before the agent speaks. */
  greeting: string;
  /** One line per turn of an outbound call; `{name}` is the person's first name. After the last line the person says goodbye and hangs up. */
  lines: string[];
  /** One line per turn of a call the person makes; the first is said on calling in when the agent waits. */
  callingIn: string[];
}

export const PERSONA_SCRIPTS: Record<SimPersona, PersonaScript> = {
  interested: {
    greeting: 'Hello?',
    lines: [
      'Yes, this is {name}. Sure, I have a minute.',
      'Oh, that sounds interesting. How much does it cost?',
      'Okay, that sounds good. Yes, I would like that.',
      "Yes, let's do it. Sign me up!",
    ],
    callingIn: [
      'Hi, this is {name}. I saw your offer and I would like to hear more.',
      'How much does it cost?',
      'Okay, that sounds good.',
      "Yes, let's do that. Thank you!",
    ],
  },
  hesitant: {
    greeting: 'Hello, who is this?',
    lines: [
      'Yes, speaking. I have a minute, I guess.',
      "Hmm, I'm not sure. It sounds too expensive for us.",
      "I don't know. We already use another provider.",
      'Could I speak to a real person about this?',
      "Okay, yes, I'd like that.",
    ],
    callingIn: [
      "Hi, this is {name}. I'm not sure you can help me.",
      'It all sounds too expensive for us.',
      'Could I speak to a real person about this?',
      "Okay, yes, I'd like that.",
    ],
  },
  callback: {
    greeting: 'Hello, yes?',
    lines: ["Sorry, I'm in a meeting right now. Can you call me back tomorrow?"],
    callingIn: ['Hi, you called me earlier, but now is a bad time. Can you call me back tomorrow?'],
  },
  not_interested: {
    greeting: 'Yes, who is this?',
    lines: ["No thanks, I'm not interested.", "I said I'm not interested. Goodbye."],
    callingIn: [
      "Hi, I had a missed call from this number, but I'm not interested, thanks.",
      "I said I'm not interested. Goodbye.",
    ],
  },
  stop_calling: {
    greeting: 'Who is this?',
    lines: ['Please stop calling me. Take me off your list.'],
    callingIn: ['You keep calling this number. Please stop calling me and take me off your list.'],
  },
};

const GOODBYE = /\b(?:bye|goodbye)\b/i;
const STILL_THERE = /still there|are you there|can you hear me/i;
const TRANSFERRING = /\b(?:let me|i'?ll|i will) (?:now )?(?:transfer|connect|put) you\b|\btransferring you\b/i;

/** One person's side of one conversation. */
export class PersonaConversation {
  private next = 0;
  private saidGoodbye = false;
  private silences = 0;

  constructor(
    readonly persona: SimPersona,
    private readonly firstName: string | null,
    private readonly direction: 'outbound' | 'inbound' = 'outbound',
  ) {}

  private fill(line: string): string {
    if (this.firstName) return line.replace('{name}', this.firstName);
    return line.replace('Yes, this is {name}', 'Yes, speaking').replace(/, this is \{name\}/, '');
  }

  private get lines(): string[] {
    const script = PERSONA_SCRIPTS[this.persona];
    return this.direction === 'inbound' ? script.callingIn : script.lines;
  }

  /** What the person says first: a "Hello?" on picking up, or why they call when the agent waits for them. */
  greeting(): string {
    if (this.direction === 'outbound') return PERSONA_SCRIPTS[this.persona].greeting;
    return this.fill(this.lines[this.next++]!);
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
    const lines = this.lines;
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

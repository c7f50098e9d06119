/**
 * The simulated agent capacity of one worker: how many conversations its agent pipeline holds at once (its slots),
 * and a share of answered calls whose pipeline starts late. A person who answers while every slot is taken hears
 * silence until a conversation ends, first come first served, and hangs up after SILENCE_HANGUP_MS of it. Every wait
 * is measured on the calls' own time lines: on a virtual clock it does not depend on how fast the process runs.
 */
import { createHash } from 'node:crypto';
import { timelineOf, type Clock } from '../../lib/clock.js';
import type { AgentReadiness } from './voice-port.js';

export interface SimAgentCapacityOptions {
  /** Conversations the agent pipeline holds at once; 0: no limit. */
  slots: number;
  /** Share (0 to 1) of answered calls whose agent starts late, chosen by the call id. */
  lateStartRate: number;
  /** How late those start. */
  lateStartMs: number;
}

/** A person hearing silence this long after answering hangs up. */
export const SILENCE_HANGUP_MS = 5_000;

/** Deterministic share of calls: the same call id always falls on the same side of `rate`. */
export const fallsWithinShare = (callId: string, rate: number) =>
  rate > 0 && createHash('sha1').update(callId).digest().readUInt16BE(0) / 65536 < rate;

/**
 * How long a waiting person has heard silence: as far as any conversation has gone since they answered, each on its
 * own time line; a conversation that took its slot after they answered counts from then.
 */
export function silenceHeard(slots: Iterable<{ heldSince: number; now: number; markedAt?: number }>): number {
  let silence = 0;
  for (const slot of slots) {
    silence = Math.max(silence, slot.now - Math.max(slot.markedAt ?? slot.heldSince, slot.heldSince));
  }
  return silence;
}

/** A slot held by a conversation: its call's time line, and when on it the slot was taken. */
interface AgentSlot {
  timeline: Clock;
  heldSince: number;
}

/** A person waiting for a slot: the held slots' times when they answered, how much silence they take, their answer. */
interface SlotWaiter {
  marks: Map<AgentSlot, number>;
  patienceMs: number;
  settle(freed: AgentSlot | null): void;
}

export interface SimAgentCapacity {
  /** A new call's own time line (see Clock.timeline), which tells the people waiting for a slot when it moves on. */
  timeline(): Clock;
  /**
   * Waits until the agent can take the answered call, on the call's time line; `release` frees the slot it took
   * (none when the person gave up). Rejects with the signal's reason when the call is ended first.
   */
  ready(callId: string, timeline: Clock, signal: AbortSignal): Promise<AgentReadiness & { release(): void }>;
}

export function createSimAgentCapacity(clock: Clock, options: SimAgentCapacityOptions): SimAgentCapacity {
  let busy = 0;
  const held = new Set<AgentSlot>();
  const waiters: SlotWaiter[] = [];

  /** A slot is free: it passes to the first person waiting (still counted busy), else it is free. */
  function passOn(freed: AgentSlot) {
    const next = waiters.shift();
    if (next) next.settle(freed);
    else busy--;
  }

  function silenceOf(waiter: SlotWaiter, freed?: AgentSlot): number {
    const slots = new Set([...waiter.marks.keys(), ...held, ...(freed ? [freed] : [])]);
    return silenceHeard(
      [...slots].map((slot) => ({
        heldSince: slot.heldSince,
        now: slot.timeline.now().getTime(),
        markedAt: waiter.marks.get(slot),
      })),
    );
  }

  /** A conversation's time moved on: people waiting who have now heard enough silence hang up. */
  function checkPatience() {
    for (const waiter of [...waiters]) {
      if (silenceOf(waiter) < waiter.patienceMs) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.settle(null);
    }
  }

  /** Waits for a slot handed over (null: the person hung up first), with the silence heard until then. */
  function slotFreed(patienceMs: number, signal: AbortSignal): Promise<{ freed: AgentSlot | null; silenceMs: number }> {
    const marks = new Map([...held].map((slot) => [slot, slot.timeline.now().getTime()]));
    return new Promise((resolve, reject) => {
      const waiter: SlotWaiter = {
        marks,
        patienceMs,
        settle(freed) {
          signal.removeEventListener('abort', onAbort);
          resolve({ freed, silenceMs: freed ? silenceOf(waiter, freed) : patienceMs });
        },
      };
      const onAbort = () => {
        waiters.splice(waiters.indexOf(waiter), 1);
        reject(signal.reason);
      };
      waiters.push(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Every slot is taken: waits for one, for as long as the conversations went on after the person answered. */
  async function waitForSlot(timeline: Clock, waitedMs: number, signal: AbortSignal) {
    const patienceMs = Math.max(0, SILENCE_HANGUP_MS - waitedMs);
    const began = timeline.now().getTime();
    const { freed, silenceMs } = await slotFreed(patienceMs, signal);
    // The silence goes on this call's own time line too: what has not passed on it already (it has on a real clock).
    const rest = Math.max(0, Math.min(silenceMs, patienceMs) - (timeline.now().getTime() - began));
    if (!freed || silenceMs >= patienceMs) {
      // They hung up before a slot came free: the slot goes on to the next person waiting.
      if (freed) passOn(freed);
      await timeline.sleep(rest, signal);
      return { gaveUp: true, silenceMs: patienceMs };
    }
    try {
      await timeline.sleep(rest, signal);
    } catch (error) {
      passOn(freed);
      throw error;
    }
    return { gaveUp: false, silenceMs };
  }

  return {
    timeline() {
      const own = timelineOf(clock);
      return {
        now: () => own.now(),
        async sleep(ms, signal) {
          await own.sleep(ms, signal);
          checkPatience();
        },
      };
    },

    async ready(callId, timeline, signal) {
      let waitedMs = 0;
      if (fallsWithinShare(callId, options.lateStartRate)) {
        await timeline.sleep(options.lateStartMs, signal);
        waitedMs += options.lateStartMs;
      }
      if (options.slots > 0 && busy >= options.slots) {
        const waited = await waitForSlot(timeline, waitedMs, signal);
        waitedMs += waited.silenceMs;
        if (waited.gaveUp) return { waitedMs, gaveUp: true, release: () => {} };
      } else {
        busy++;
      }
      const slot: AgentSlot = { timeline, heldSince: timeline.now().getTime() };
      held.add(slot);
      return {
        waitedMs,
        gaveUp: false,
        release: () => {
          if (held.delete(slot)) passOn(slot);
        },
      };
    },
  };
}

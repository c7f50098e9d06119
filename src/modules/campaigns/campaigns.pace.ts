/**
 * The abandon-rate rules: how the rate is figured, when it pauses a campaign for compliance, and the governor that
 * sets how many of a campaign's calls may be under way at once (its pace) from that rate.
 */

/** Over 2 s from a live person's greeting to the agent's first words: the call was abandoned. */
export const ABANDON_LATENCY_MS = 2_000;
/** Above this 30-day abandon rate a campaign is paused for compliance. */
export const ABANDON_PAUSE_THRESHOLD = 0.035;
/** The governor keeps the 30-day rate under this; from it on, it dials one call at a time. */
export const ABANDON_TARGET = 0.03;
/** The governor raises the pace only while one more abandoned call would keep the 30-day rate at or under this. */
export const GOVERNOR_WORKING_TARGET = 0.02;

/** Abandoned calls among the calls a live person answered, over some window. */
export interface AbandonFigure {
  abandoned: number;
  liveAnswered: number;
}

/** What a compliance pause records (and its event carries). */
export interface ComplianceBreach extends AbandonFigure {
  abandonRate: number;
  threshold: number;
  window: '30d';
}

/** A campaign's concurrency settings: its maximum, and the pace the governor last set. */
export interface PaceSettings {
  max_concurrency: number;
  pace_limit: number;
}

const DAY = 24 * 3600_000;

/** The abandon-rate windows ending at `now`: 30 days, since midnight UTC, the last hour. */
export function windows(now: Date) {
  const today = new Date(now);
  today.setUTCHours(0, 0, 0, 0);
  return { last30Days: new Date(now.getTime() - 30 * DAY), today, lastHour: new Date(now.getTime() - 3600_000) };
}

export const abandonRate = (figure: AbandonFigure) =>
  figure.liveAnswered === 0 ? 0 : figure.abandoned / figure.liveAnswered;

/** Calls of the campaign allowed under way at once by the governor's pace: its maximum, lowered (at least one). */
export const governedConcurrency = (campaign: PaceSettings) =>
  Math.max(1, Math.min(campaign.max_concurrency, Math.floor(campaign.pace_limit)));

/**
 * The governor: the calls allowed under way (the pace) after a call ended. It cannot see the agents' capacity, only
 * the 30-day abandon rate over live answers, so it learns the pace from that rate's budget:
 * - an abandoned call halves the pace, below the level it happened at (a burst of them falls to one call fast);
 * - from a 30-day rate of 3% it dials one call at a time;
 * - a call that ended well raises the pace by one, a probe, only while the campaign has the budget for it: one more
 *   abandoned call keeps the 30-day rate at or under 2%, and even every call that can be under way after the raise
 *   abandoned keeps it under 3%. Abandoned calls not yet counted are among those under way, and the first of them to
 *   end halves the pace, so a probe never takes the rate over 3%. The budget is also the governor's memory: after an
 *   abandonment, about 50 more calls answered well per abandoned one come before the next probe, and each level
 *   needs about 33 live answers per call under way.
 * Without live answers there is no budget: a campaign whose calls nobody answers stays at its starting pace.
 * `underWay`: the campaign's calls under way now.
 */
export function governedPace(
  campaign: PaceSettings,
  abandoned: boolean,
  last30: AbandonFigure,
  underWay: number,
): number {
  const level = governedConcurrency(campaign);
  if (abandoned) return Math.max(1, Math.floor(level / 2));
  if (abandonRate(last30) >= ABANDON_TARGET) return 1;
  if (level >= campaign.max_concurrency) return level;
  const worstUnderWay = Math.max(level + 1, underWay);
  const withOneMore = (last30.abandoned + 1) / (last30.liveAnswered + 1);
  const withAllUnderWay = (last30.abandoned + worstUnderWay) / (last30.liveAnswered + worstUnderWay);
  return withOneMore <= GOVERNOR_WORKING_TARGET && withAllUnderWay < ABANDON_TARGET ? level + 1 : level;
}

/**
 * Whether the 30-day figures pause the campaign for compliance: a rate above 3.5%, once the window has at least
 * `minLiveAnswered` live answers (a rate over a few calls says little). Answers what the pause records, or null.
 */
export function complianceBreach(last30: AbandonFigure, minLiveAnswered: number): ComplianceBreach | null {
  const rate = abandonRate(last30);
  if (last30.liveAnswered < minLiveAnswered || rate <= ABANDON_PAUSE_THRESHOLD) return null;
  return {
    abandonRate: Number(rate.toFixed(6)),
    threshold: ABANDON_PAUSE_THRESHOLD,
    window: '30d',
    abandoned: last30.abandoned,
    liveAnswered: last30.liveAnswered,
  };
}

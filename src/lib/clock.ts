/** Time comes from a clock passed down, so services can be driven at a chosen time in tests and jobs. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * The call engine's jobs: running a call (the calls.run job), the sweep of calls left live by a process that died
 * (the calls.sweep job), and the hang-up of this process's calls when it stops. Control of a live call from any
 * instance (hang up, inject words) travels by broadcast to the process that runs it.
 */
import type { Logger } from 'pino';
import type { CallsConfig } from '../../config.js';
import type { DatabaseKind } from '../../db/staging.js';
import type { Broadcast } from '../../lib/broadcast.js';
import type { CallLifecycle } from './calls.lifecycle.js';
import type { CallsRepo } from './calls.repo.js';
import { lostCallReport } from './calls.rules.js';
import type { CallRunner } from './calls.runner.js';
import { isLive } from './calls.tables.js';

const CONTROL_TOPIC = 'calls.control';

export interface CallsEngineDeps {
  repo: CallsRepo;
  config: CallsConfig;
  databaseKind: DatabaseKind;
  lifecycle: CallLifecycle;
  runner: CallRunner;
  broadcast: Broadcast;
  log: Logger;
}

/** Asks the process running a live call, whichever it is, to hang it up or to have its agent say words. */
export function createCallControl(broadcast: Broadcast, runner: Pick<CallRunner, 'hangup' | 'inject'>) {
  broadcast.subscribe(CONTROL_TOPIC, (message) => {
    const callId = typeof message.callId === 'string' ? message.callId : null;
    if (!callId) return;
    if (message.action === 'hangup') runner.hangup(callId);
    else if (message.action === 'inject' && typeof message.text === 'string') runner.inject(callId, message.text);
  });
  return {
    hangup: (callId: string) => broadcast.publish(CONTROL_TOPIC, { action: 'hangup', callId }),
    inject: (callId: string, text: string) => broadcast.publish(CONTROL_TOPIC, { action: 'inject', callId, text }),
  };
}

export type CallControl = ReturnType<typeof createCallControl>;

export function createCallsEngine(deps: CallsEngineDeps) {
  const { repo, config, databaseKind, lifecycle, runner, log } = deps;

  return {
    /** The calls.run job: runs the call if its account has a free slot (else it waits for one). */
    run: (accountId: string, callId: string) => runner.run(accountId, callId),

    /**
     * For a stopping process: hangs up the live calls it runs, with endReason server_shutdown and their costs to
     * this moment, waits until their ends are written, and starts no more calls.
     */
    shutdown: () => runner.hangupAll('server_shutdown'),

    /**
     * Closes the live calls of processes that died, as failed with endReason worker_lost and their costs to their last
     * heartbeat, then starts waiting calls that have free slots. On the embedded database one process owns the data,
     * so every live call it is not running itself is lost; on PostgreSQL a call is lost when its heartbeat is older
     * than CALLS_HEARTBEAT_STALE_SECONDS. `spared`: the live calls it found that this process carries.
     */
    async sweepLostCalls() {
      const staleMs = config.heartbeatStaleSeconds * 1000;
      const staleBefore = new Date((await repo.databaseNow()).getTime() - staleMs);
      const candidates = await repo.lostCallCandidates(databaseKind === 'pglite' ? 'every live call' : { staleBefore });
      let closed = 0;
      let spared = 0;
      for (const candidate of candidates) {
        const ended = await lifecycle.finish(candidate.account_id, candidate.id, (row) => {
          // Asked on the locked row, not from a list taken earlier: a call claimed since is this process's own.
          if (!isLive(row.status)) return null;
          if (runner.carries(row.id)) {
            spared++;
            return null;
          }
          if (databaseKind !== 'pglite' && row.heartbeat_at && row.heartbeat_at >= staleBefore) return null;
          return lostCallReport(row);
        });
        if (ended && !ended.duplicate) {
          closed++;
          log.warn({ callId: candidate.id }, 'closed a call whose process stopped (worker_lost)');
        }
      }
      for (const { account_id } of await repo.accountsWithQueuedCalls()) await lifecycle.dispatchQueued(account_id);
      return { closed, spared };
    },
  };
}

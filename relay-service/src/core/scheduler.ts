/**
 * Periodic channel work that must run on one relay at a time (ARCHITECTURE.md §1): scheduled "test all"
 * (new-api's CHANNEL_TEST_FREQUENCY, which auto-disables failing channels and re-enables recovered ones) and
 * balance polling (CHANNEL_UPDATE_FREQUENCY). Each job takes a store lease for longer than one run, so a second
 * relay skips it; if the leader dies, the lease expires and another relay picks the job up.
 */
import type { Logger } from '../log.ts';
import type { RelayStore } from '../store/types.ts';

export type ScheduledJob = {
  name: string;
  everyMs: number;
  run(): Promise<void>;
};

export function startScheduler(opts: {
  store: RelayStore;
  holder: string;
  log: Logger;
  jobs: ScheduledJob[];
}): { stop(): Promise<void> } {
  const timers: ReturnType<typeof setInterval>[] = [];
  const running = new Set<Promise<void>>();
  let stopped = false;
  for (const job of opts.jobs) {
    if (job.everyMs <= 0) continue;
    let busy = false;
    const tick = async () => {
      if (busy || stopped) return;
      busy = true;
      try {
        // The lease outlives one period so a slow run is not started twice elsewhere.
        if (!(await opts.store.acquireLease(job.name, opts.holder, job.everyMs * 2))) return;
        await job.run();
      } catch (err) {
        opts.log.warn(`scheduled ${job.name} failed: ${(err as Error).message}`);
      } finally {
        busy = false;
      }
    };
    const timer = setInterval(() => {
      const p = tick();
      running.add(p);
      void p.finally(() => running.delete(p));
    }, job.everyMs);
    timer.unref?.();
    timers.push(timer);
  }
  return {
    async stop() {
      stopped = true;
      for (const t of timers) clearInterval(t);
      await Promise.allSettled([...running]);
      await Promise.allSettled(opts.jobs.map((j) => opts.store.releaseLease(j.name, opts.holder)));
    },
  };
}

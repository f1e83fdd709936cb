import { describe, expect, it } from 'vitest';
import { silentLogger } from '../log.ts';
import { MemoryStore } from '../store/memory.ts';
import { startScheduler } from './scheduler.ts';

describe('leader-run scheduled jobs', () => {
  it('runs each job on one holder only, and another takes over when the leader stops', async () => {
    const store = new MemoryStore();
    const runs: string[] = [];
    const make = (holder: string) =>
      startScheduler({
        store,
        holder,
        log: silentLogger,
        jobs: [{ name: 'tests', everyMs: 20, run: async () => void runs.push(holder) }],
      });
    const a = make('a');
    const b = make('b');
    await new Promise((r) => setTimeout(r, 150));
    expect(runs.length).toBeGreaterThan(2);
    expect(new Set(runs).size).toBe(1);
    const leader = runs[0]!;
    await (leader === 'a' ? a : b).stop();
    runs.length = 0;
    await new Promise((r) => setTimeout(r, 100));
    expect(runs.length).toBeGreaterThan(0);
    expect(runs.every((h) => h !== leader)).toBe(true);
    await (leader === 'a' ? b : a).stop();
    await store.close();
  });

  it('skips jobs with no interval', async () => {
    const store = new MemoryStore();
    let ran = 0;
    const s = startScheduler({
      store,
      holder: 'x',
      log: silentLogger,
      jobs: [{ name: 'off', everyMs: 0, run: async () => void ran++ }],
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(ran).toBe(0);
    await s.stop();
  });
});

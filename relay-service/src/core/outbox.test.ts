import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AckResult, BillingReporter } from '../grpc/billing-client.ts';
import { silentLogger } from '../log.ts';
import { MemoryStore } from '../store/memory.ts';
import type { OutboxEntry } from '../store/types.ts';
import { OutboxForwarder } from './outbox.ts';

const FLUSH_MS = 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A Billing that answers each report after `latencyMs` and records the batches it saw. */
function billing(latencyMs: number) {
  const batches: string[][] = [];
  let down = false;
  let calls = 0;
  const reporter: BillingReporter = {
    async report(payloads) {
      calls++;
      await sleep(latencyMs);
      if (down) throw new Error('14 UNAVAILABLE: connection refused');
      const ids = payloads.map((p) => (JSON.parse(p) as { requestId: string }).requestId);
      batches.push(ids);
      return ids.map((requestId): AckResult => ({ requestId, status: 'accepted', message: '' }));
    },
    close() {},
  };
  return {
    reporter,
    batches,
    calls: () => calls,
    setDown(v: boolean) {
      down = v;
    },
  };
}

describe('OutboxForwarder', () => {
  let store: MemoryStore;
  let forwarder: OutboxForwarder | undefined;
  let n = 0;

  afterEach(async () => {
    await forwarder?.stop();
    forwarder = undefined;
    await store.close();
  });

  /** Settles one call in the store (its outbox entry) and hands the entry to the forwarder, like the relay. */
  async function settle(f: OutboxForwarder): Promise<OutboxEntry> {
    const requestId = `req-${++n}`;
    const payload = JSON.stringify({ requestId });
    const now = Date.now();
    const { entryId } = await store.settle({
      requestId,
      userId: 1,
      tokenId: 2,
      amount: 10,
      success: true,
      payload,
      now,
    });
    const entry = { id: entryId, requestId, userId: 1, tokenId: 2, amount: 10, payload, createdAt: now };
    f.enqueue(entry);
    return entry;
  }

  function start(reporter: BillingReporter, batchSize = 200) {
    n = 0;
    store = new MemoryStore();
    forwarder = new OutboxForwarder({
      store,
      reporter,
      log: silentLogger,
      flushDelayMs: FLUSH_MS,
      batchSize,
      sweepAfterMs: 60_000,
    });
    return forwarder;
  }

  it('gathers steady one-at-a-time traffic into batches instead of a report per call', async () => {
    // Billing takes 2 ms per report and a call settles about every millisecond: reporting whatever arrived while
    // the previous report was in flight sent one to three events per report.
    const b = billing(2);
    const f = start(b.reporter);
    for (let i = 0; i < 120; i++) {
      await settle(f);
      await sleep(1);
    }
    await f.stop();
    const reported = b.batches.flat();
    expect(reported).toHaveLength(120);
    expect(new Set(reported).size).toBe(120);
    // A 20 ms window holds ten or more calls at this pace (fewer only if the machine is very slow).
    expect(reported.length / b.batches.length).toBeGreaterThanOrEqual(8);
    expect(await store.outboxPending(Date.now() + 1, 1000)).toEqual([]);
  });

  it('reports what was settled during an in-flight report in the next window', async () => {
    const b = billing(30);
    const f = start(b.reporter);
    await settle(f);
    await vi.waitFor(() => expect(b.calls()).toBe(1), { timeout: 2_000, interval: 2 });
    // The first report is in flight now.
    await settle(f);
    await settle(f);
    await vi.waitFor(() => expect(f.pending).toBe(0), { timeout: 2_000, interval: 5 });
    expect(b.batches).toEqual([['req-1'], ['req-2', 'req-3']]);
  });

  it('drains a backlog larger than one batch in consecutive reports', async () => {
    const b = billing(1);
    const f = start(b.reporter, 50);
    for (let i = 0; i < 130; i++) await settle(f);
    await vi.waitFor(() => expect(f.pending).toBe(0), { timeout: 2_000, interval: 5 });
    expect(b.batches.map((x) => x.length)).toEqual([50, 50, 30]);
  });

  it('keeps events while Billing is down and reports them once it is back', async () => {
    const b = billing(1);
    b.setDown(true);
    const f = start(b.reporter);
    await settle(f);
    await settle(f);
    await sleep(FLUSH_MS + 20);
    expect(b.batches).toEqual([]);
    expect(f.pending).toBe(2);
    b.setDown(false);
    // The forwarder backs off for a second after a failed report, then tries again by itself.
    await vi.waitFor(() => expect(f.pending).toBe(0), { timeout: 3_000, interval: 20 });
    expect(b.batches.flat()).toEqual(['req-1', 'req-2']);
    expect(await store.outboxPending(Date.now() + 1, 1000)).toEqual([]);
  });

  it('reports everything fresh when stopped', async () => {
    const b = billing(2);
    const f = start(b.reporter, 10);
    for (let i = 0; i < 25; i++) await settle(f);
    await f.stop();
    expect(b.batches.flat()).toHaveLength(25);
    expect(f.pending).toBe(0);
  });
});

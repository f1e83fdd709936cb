/**
 * Durability of billed usage across a relay crash while Billing is unreachable (issue 13, item 5), in both
 * store modes, with real processes: the console's Billing gRPC service and one relay (`node
 * relay-service/src/main.ts`) each in their own process, a private redis-server for the Redis mode, the fake
 * OpenAI upstream in this process.
 *
 * Billing is frozen (SIGSTOP), the relay answers calls (their usage can only wait in the outbox) while a load
 * keeps running, the relay is killed with SIGKILL in the middle of that load, then Billing resumes (SIGCONT) and
 * the relay restarts on the same port. Every call the client saw answered in full is billed exactly once: its
 * log row, its usage_ledger row, and the user's and token's balances to the unit. Calls the kill cut may be
 * billed (the relay settled before it died) but never twice.
 */
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';
import {
  billingProc,
  freePort,
  killAll,
  type Proc,
  redisProc,
  relayProc,
  sleep,
  startBilling,
  startRedis,
  startRelayProc,
  until,
} from './cluster/procs.ts';
import { type Stack, seedChannel, seedToken, seedUser } from './relay-stack.ts';

const MODEL = 'gpt-4o-mini';
/** ModelPrice 0.002 USD × 500,000 quota per USD: every call costs exactly 1000. */
const CALL_COST = 1000;
/** Priced by tokens (1 quota per token both ways), so a bill shows how much of a stream was delivered. */
const RATIO_MODEL = 'ratio-model';
const USER_QUOTA = 50_000_000;
const TOKEN_QUOTA = 20_000_000;

type Outcome = {
  kind: 'ok' | 'cut' | 'refused' | 'error';
  status: number;
  id: string | null;
  stream: boolean;
};

/** Totals over both modes, printed at the end: the figures of the closing note. */
const figures = { faults: 0, answered: 0, lost: 0, doubleBilled: 0 };
afterAll(() => {
  console.info(
    `[durability] faults ${figures.faults}, answered ${figures.answered}, lost ${figures.lost}, double-billed ${figures.doubleBilled}`,
  );
});

for (const mode of ['memory', 'redis'] as const) {
  describe(`billed usage across process faults (${mode} store)`, { timeout: 60_000 }, () => {
    let fake: FakeOpenAI;
    let db: TestDatabase;
    let billing: Proc;
    let relay: Proc;
    let relayUrl: string;
    const procs: Proc[] = [];
    const sql = async <T = Record<string, unknown>>(query: string, params: unknown[] = []) =>
      (await db.orm.em.getConnection().execute(query, params, 'all')) as T[];

    beforeAll(async () => {
      fake = await startFakeOpenAI();
      db = await createTestDatabase({ suffix: `durability_${mode}`, poolMax: 4 });
      const seeds = { sql } as unknown as Stack;
      await seedChannel(seeds, { baseUrl: fake.url, models: [MODEL, RATIO_MODEL] });
      await sql(
        `insert into options (key, value) values ('ModelPrice', ?), ('ModelRatio', ?), ('CompletionRatio', ?)`,
        [
          JSON.stringify({ [MODEL]: 0.002 }),
          JSON.stringify({ [RATIO_MODEL]: 0.5 }),
          JSON.stringify({ [RATIO_MODEL]: 1 }),
        ],
      );
      let redisUrl: string | undefined;
      if (mode === 'redis') {
        const port = await freePort();
        const redis = redisProc(port);
        procs.push(redis);
        await startRedis(redis, port);
        redisUrl = `redis://127.0.0.1:${port}`;
      }
      const billingPort = await freePort();
      billing = billingProc(billingPort, db.url);
      procs.push(billing);
      const relayPort = await freePort();
      relayUrl = `http://127.0.0.1:${relayPort}`;
      relay = relayProc(`relay-${mode}`, {
        RELAY_HOST: '127.0.0.1',
        RELAY_PORT: String(relayPort),
        RELAY_GRPC_PORT: '0',
        DATABASE_URL: db.url,
        DATABASE_POOL_MAX: '4',
        ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
        BILLING_GRPC_URL: `127.0.0.1:${billingPort}`,
        RELAY_OUTBOX_SWEEP_AFTER_MS: '1000',
        RELAY_UPSTREAM_TIMEOUT_MS: '10000',
        RELAY_DRAIN_TIMEOUT_MS: '1000',
      });
      procs.push(relay);
      await Promise.all([startBilling(billing), startRelayProc(relay, relayUrl)]);
    }, 60_000);

    afterAll(async () => {
      // A stopped process does not act on SIGKILL until it is continued.
      billing?.child?.kill('SIGCONT');
      await killAll(procs);
      await fake?.close();
      await db?.drop();
    });

    async function call(key: string, stream: boolean): Promise<Outcome> {
      let res: Response;
      try {
        res = await fetch(`${relayUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            model: MODEL,
            messages: [{ role: 'user', content: 'hello there' }],
            ...(stream ? { stream: true } : {}),
          }),
          signal: AbortSignal.timeout(15_000),
        });
      } catch {
        return { kind: 'error', status: 0, id: null, stream };
      }
      const id = res.headers.get('x-request-id');
      let text: string;
      try {
        text = await res.text();
      } catch {
        return { kind: 'cut', status: res.status, id, stream };
      }
      if (res.status !== 200) return { kind: 'refused', status: res.status, id, stream };
      // A stream the relay finished ends with [DONE]; a cut one does not.
      if (stream && !text.includes('data: [DONE]')) return { kind: 'cut', status: 200, id, stream };
      return { kind: 'ok', status: 200, id, stream };
    }

    it('every answered call is billed exactly once after the relay and Billing restart', async () => {
      const user = await seedUser({ sql } as unknown as Stack, { quota: USER_QUOTA });
      const token = await seedToken({ sql } as unknown as Stack, user.id, { remainQuota: TOKEN_QUOTA });
      fake.reset();
      // Streams take ~0.2 s, so the kill lands on calls in flight.
      fake.on({ model: MODEL, respond: { delayMs: 10, streamDelayMs: 50 } });

      billing.child!.kill('SIGSTOP');
      const outcomes: Outcome[] = [];
      let running = true;
      let n = 0;
      const workers = Array.from({ length: 6 }, async () => {
        while (running) {
          const o = await call(token.key, n++ % 2 === 0);
          outcomes.push(o);
          if (o.kind !== 'ok') await sleep(50);
        }
      });
      await until('40 calls answered while Billing is frozen', async () => {
        return outcomes.filter((o) => o.kind === 'ok').length >= 40;
      });
      await relay.kill('SIGKILL');
      running = false;
      await Promise.all(workers);
      figures.faults += 2;

      billing.child!.kill('SIGCONT');
      await startRelayProc(relay, relayUrl);

      const ok = outcomes.filter((o) => o.kind === 'ok');
      const okIds = new Set(ok.map((o) => o.id!));
      expect(ok.length).toBeGreaterThanOrEqual(40);
      // Nothing was refused: a frozen Billing does not stop the relay from serving.
      expect(outcomes.filter((o) => o.kind === 'refused')).toEqual([]);

      const logIds = async () =>
        (
          await sql<{ request_id: string }>(`select request_id from logs where type = 2 and user_id = ?`, [
            user.id,
          ])
        ).map((r) => r.request_id);
      let lastCount = -1;
      await until(
        'every answered call billed, and no more rows arriving',
        async () => {
          const ids = await logIds();
          const done = [...okIds].every((id) => ids.includes(id)) && ids.length === lastCount;
          lastCount = ids.length;
          return done;
        },
        20_000,
        700,
        // On a timeout the assertions below say what is missing.
      ).catch(() => {});

      const ids = await logIds();
      const billed = new Set(ids);
      const lost = [...okIds].filter((id) => !billed.has(id));
      const doubleBilled = ids.length - billed.size;
      figures.answered += ok.length;
      figures.lost += lost.length;
      figures.doubleBilled += doubleBilled;
      expect(lost).toEqual([]);
      expect(doubleBilled).toBe(0);
      // Rows beyond the answered calls belong to calls the kill cut after their settle: a cut stream (its id is
      // known) or a non-stream call whose reply was being written (the client saw only a dropped connection).
      const cutIds = new Set(outcomes.filter((o) => o.kind === 'cut').map((o) => o.id));
      const unexplained = ids.filter((id) => !okIds.has(id) && !cutIds.has(id));
      expect(unexplained.length).toBeLessThanOrEqual(outcomes.filter((o) => o.kind === 'error').length);

      const [ledger] = await sql<{ n: string; s: string }>(
        'select count(*) as n, coalesce(sum(quota), 0) as s from usage_ledger where user_id = ?',
        [user.id],
      );
      const [u] = await sql<{ quota: string; used_quota: string }>(
        'select quota, used_quota from users where id = ?',
        [user.id],
      );
      const [t] = await sql<{ remain_quota: string; used_quota: string }>(
        'select remain_quota, used_quota from tokens where id = ?',
        [token.id],
      );
      const charged = ids.length * CALL_COST;
      expect([Number(ledger!.n), Number(ledger!.s)]).toEqual([ids.length, charged]);
      expect([USER_QUOTA - Number(u!.quota), Number(u!.used_quota)]).toEqual([charged, charged]);
      expect([TOKEN_QUOTA - Number(t!.remain_quota), Number(t!.used_quota)]).toEqual([charged, charged]);
      if (mode === 'memory') {
        // The restarted relay's journal is empty once Billing acknowledged everything.
        await until('journal drained', async () => {
          const [j] = await sql<{ n: string }>('select count(*) as n from relay_outbox');
          return Number(j!.n) === 0;
        });
      }
      console.info(
        `[durability ${mode}] answered ${ok.length} (cut ${cutIds.size}, failed ${outcomes.filter((o) => o.kind === 'error').length}); billed ${ids.length}; lost ${lost.length}; double-billed ${doubleBilled}`,
      );
    });

    it('a stream the client cuts is billed once for what it delivered (settled: its hold is gone with it)', async () => {
      const user = await seedUser({ sql } as unknown as Stack, { quota: USER_QUOTA });
      const token = await seedToken({ sql } as unknown as Stack, user.id, { remainQuota: TOKEN_QUOTA });
      const model = RATIO_MODEL;
      fake.reset();
      fake.on({
        model,
        respond: { content: Array.from({ length: 40 }, () => 'story').join(' '), streamDelayMs: 80 },
      });
      const ac = new AbortController();
      const res = await fetch(`${relayUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer sk-${token.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'a long story' }] }),
        signal: ac.signal,
      });
      expect(res.status).toBe(200);
      const id = res.headers.get('x-request-id');
      const reader = res.body!.getReader();
      let seen = '';
      while ((seen.match(/story/g)?.length ?? 0) < 3)
        seen += new TextDecoder().decode((await reader.read()).value);
      ac.abort();
      figures.faults += 1;
      const rows = await until('the cut stream billed', async () => {
        const r = await sql<{ request_id: string; quota: string; completion_tokens: number }>(
          'select request_id, quota, completion_tokens from logs where type = 2 and user_id = ?',
          [user.id],
        );
        return r.length > 0 ? r : null;
      });
      await sleep(500);
      expect(rows.map((r) => r.request_id)).toEqual([id]);
      expect(rows[0]!.completion_tokens).toBeGreaterThanOrEqual(3);
      expect(rows[0]!.completion_tokens).toBeLessThan(40);
      const [u] = await sql<{ quota: string }>('select quota from users where id = ?', [user.id]);
      expect(USER_QUOTA - Number(u!.quota)).toBe(Number(rows[0]!.quota));
    });
  });
}

/**
 * Billing under load (issue 7): after a soak at the sustained rate, wait until every settled call has been
 * billed, then reconcile exactly: what the client got, what the fake reported, the consume logs and the
 * user's and token's balances in PostgreSQL. Pure helpers; bench/run.ts runs the soak and collects the figures.
 */
import { sleep } from './client.ts';

/** The bench's prices (bench/lib/console.ts sets them): gpt-4o-mini ModelRatio 0.075, CompletionRatio 4. */
export const PRICES = { model: 'gpt-4o-mini', modelRatio: 0.075, completionRatio: 4, groupRatio: 1 } as const;

/**
 * The quota of one text call with OpenAI usage and no cache or audio, by hand (gateway-behaviour.md §3.2,
 * relay-service/src/core/pricing.ts computeQuota):
 *   quota = round((P + O · CompletionRatio) · ModelRatio · GroupRatio), rounded half away from zero,
 *   and 1 when that is ≤ 0 while tokens were used and M·G ≠ 0.
 * Done in integers so it is exact: ModelRatio 0.075 = 75/1000, CompletionRatio 4, GroupRatio 1, hence
 *   quota = floor(((P + 4·O) · 75 · 2 + 1000) / 2000).
 * Written out rather than imported, so a pricing bug in the relay cannot hide by being used on both sides.
 */
export function expectedQuota(promptTokens: number, completionTokens: number): number {
  if (promptTokens + completionTokens === 0) return 0;
  const weighted = promptTokens + completionTokens * PRICES.completionRatio;
  const quota = Math.floor((weighted * 75 * 2 + 1000) / 2000);
  return Math.max(1, quota);
}

export type BillingSnapshot = {
  userQuota: number;
  userUsedQuota: number;
  tokenRemainQuota: number;
  tokenUsedQuota: number;
  maxLogId: number;
};

export type FakeStats = { answered: number; streams: number; promptTokens: number; completionTokens: number };

export type LogReconcile = {
  rows: number;
  distinctRequestIds: number;
  rowsWithRequestId: number;
  sumQuota: number;
  sumPromptTokens: number;
  sumCompletionTokens: number;
  rowsOfOtherAccounts: number;
  nonConsumeRows: number;
  groups: {
    promptTokens: number;
    completionTokens: number;
    isStream: boolean;
    model: string;
    quota: number;
    n: number;
  }[];
};

export type ClientTotals = {
  requests: number;
  ok200: number;
  non200: number;
  failed: number;
  streamed: number;
  streamOk: number;
  streamNoDone: number;
};

export type Check = {
  check: string;
  left: string;
  leftValue: number;
  right: string;
  rightValue: number;
  ok: boolean;
};

/**
 * Waits until the relay has nothing left to bill: its Redis outbox (under `prefix`) is empty, no quota hold is
 * open and no pending amount is left. Returns how long that took, or throws after `timeoutMs`.
 */
/** The few Redis commands drainBilling needs (node-redis's client has them). */
type RedisReads = {
  xLen(key: string): Promise<number>;
  zCard(key: string): Promise<number>;
  scanIterator(opts: { MATCH: string; COUNT: number }): AsyncIterable<string[]>;
};

export async function drainBilling(
  rc: RedisReads,
  prefix: string,
  timeoutMs = 120_000,
): Promise<{ ms: number; outbox: number; holds: number; pend: number }> {
  const t0 = performance.now();
  for (;;) {
    const [outbox, holds] = await Promise.all([rc.xLen(`${prefix}outbox`), rc.zCard(`${prefix}holds`)]);
    let pend = 0;
    if (outbox === 0 && holds === 0)
      for await (const batch of rc.scanIterator({ MATCH: `${prefix}pend:*`, COUNT: 1000 }))
        pend += batch.length;
    const ms = performance.now() - t0;
    if (outbox === 0 && holds === 0 && pend === 0) return { ms, outbox, holds, pend };
    if (ms > timeoutMs)
      throw new Error(
        `billing did not drain in ${timeoutMs} ms: outbox ${outbox}, holds ${holds}, pend ${pend}`,
      );
    await sleep(100);
  }
}

/** Every equality the soak must meet, each with both sides. */
export function reconcileChecks(
  client: ClientTotals,
  before: BillingSnapshot,
  after: BillingSnapshot,
  fake0: FakeStats,
  fake1: FakeStats,
  logs: LogReconcile,
): Check[] {
  const eq = (check: string, left: string, l: number, right: string, r: number): Check => ({
    check,
    left,
    leftValue: l,
    right,
    rightValue: r,
    ok: l === r,
  });
  const mispriced = logs.groups
    .filter((g) => g.quota !== expectedQuota(g.promptTokens, g.completionTokens) || g.model !== PRICES.model)
    .reduce((s, g) => s + g.n, 0);
  const streamRows = logs.groups.filter((g) => g.isStream).reduce((s, g) => s + g.n, 0);
  return [
    eq(
      'every 200 answer has one consume log',
      '200 answers (client)',
      client.ok200,
      'consume log rows',
      logs.rows,
    ),
    eq(
      'every call the fake answered has one consume log',
      'calls answered with usage (fake)',
      fake1.answered - fake0.answered,
      'consume log rows',
      logs.rows,
    ),
    eq(
      'streamed calls logged as streams',
      'streamed 200s to [DONE] (client)',
      client.streamOk,
      'stream log rows',
      streamRows,
    ),
    eq(
      'user used_quota grew by the logged quota',
      'Σ logs.quota',
      logs.sumQuota,
      'users.used_quota after − before',
      after.userUsedQuota - before.userUsedQuota,
    ),
    eq(
      'user quota fell by the logged quota',
      'Σ logs.quota',
      logs.sumQuota,
      'users.quota before − after',
      before.userQuota - after.userQuota,
    ),
    eq(
      'token used_quota grew by the logged quota',
      'Σ logs.quota',
      logs.sumQuota,
      'tokens.used_quota after − before',
      after.tokenUsedQuota - before.tokenUsedQuota,
    ),
    eq(
      'token remain_quota fell by the logged quota',
      'Σ logs.quota',
      logs.sumQuota,
      'tokens.remain_quota before − after',
      before.tokenRemainQuota - after.tokenRemainQuota,
    ),
    eq(
      'prompt tokens billed = prompt tokens the fake reported',
      'Σ logs.prompt_tokens',
      logs.sumPromptTokens,
      'fake usage prompt_tokens',
      fake1.promptTokens - fake0.promptTokens,
    ),
    eq(
      'completion tokens billed = completion tokens the fake reported',
      'Σ logs.completion_tokens',
      logs.sumCompletionTokens,
      'fake usage completion_tokens',
      fake1.completionTokens - fake0.completionTokens,
    ),
    eq('no request id twice', 'distinct request_id', logs.distinctRequestIds, 'consume log rows', logs.rows),
    eq(
      'every log has a request id',
      'rows with request_id',
      logs.rowsWithRequestId,
      'consume log rows',
      logs.rows,
    ),
    eq(
      'every log priced by hand (round((P + 4·O)·0.075))',
      'rows whose quota ≠ the hand price',
      mispriced,
      'expected',
      0,
    ),
    eq('no log of another account', 'rows of another user or token', logs.rowsOfOtherAccounts, 'expected', 0),
    eq('no non-200 answer', 'non-200 or failed calls (client)', client.non200, 'expected', 0),
    eq(
      'every stream ended with [DONE]',
      'streams cut before [DONE] (client)',
      client.streamNoDone,
      'expected',
      0,
    ),
  ];
}

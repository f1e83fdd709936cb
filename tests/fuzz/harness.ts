/**
 * Shared pieces of the fuzz suites: run size and seed (FUZZ_RUNS / FUZZ_SEED), the table checksum that proves
 * a refused request changed nothing, and the tally printed at the end (inputs fuzzed, 5xx answers).
 */
import type fc from 'fast-check';
import type { Stack } from '../integration/relay-stack.ts';

/** Runs per property; the default keeps the whole suite near a minute on a slow 2-core machine. */
export function runs(defaultRuns: number): number {
  const n = Number(process.env.FUZZ_RUNS ?? '');
  return Number.isFinite(n) && n > 0 ? n : defaultRuns;
}

/** FUZZ_SEED replays a run; otherwise a fresh seed per suite, printed by fast-check on failure. */
export const SEED = Number(process.env.FUZZ_SEED ?? '') || Date.now() % 2 ** 31;

/** FUZZ_COUNT=1 tallies every 5xx instead of stopping at the first (to measure, not for CI). */
export const COUNT_ONLY = process.env.FUZZ_COUNT === '1';

export function params(numRuns: number): fc.Parameters<unknown> {
  return { numRuns, seed: SEED, endOnFailure: false, verbose: 1 };
}

export type Tally = { inputs: number; fivexx: number; changedOnRefusal: number; examples: string[] };
export const newTally = (): Tally => ({ inputs: 0, fivexx: 0, changedOnRefusal: 0, examples: [] });

/**
 * The console-written state a refused request must leave alone: users, tokens, channels' configuration (not the
 * health columns the relay writes after a channel test), abilities, redemptions, options, versions.
 */
const CHECKSUM_SQL = `select md5(concat_ws('|',
  (select string_agg(md5(t::text), ',' order by id) from users t),
  (select string_agg(md5(t::text), ',' order by id) from tokens t),
  (select string_agg(md5(concat_ws(',', id, type, name, key, base_url, models, "group", priority, weight, tag,
     model_mapping, status_code_mapping, setting, other, auto_ban, test_model)), ',' order by id) from channels),
  (select string_agg(md5(t::text), ',' order by channel_id, "group", model) from abilities t),
  (select string_agg(md5(t::text), ',' order by id) from redemptions t),
  (select string_agg(md5(t::text), ',' order by key) from options t),
  (select string_agg(md5(t::text), ',' order by id) from versions t)
)) as sum`;

export async function checksum(stack: Stack): Promise<string> {
  const [row] = await stack.sql<{ sum: string }>(CHECKSUM_SQL);
  return row?.sum ?? '';
}

/** Printable form of a fuzzed input (NULs and lone surrogates escaped). */
export function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/** The dashboard's shared shapes (server and page). */
import type { Granularity } from './time.ts';

export type Metric = 'quota' | 'tokens' | 'count';
export const METRICS: readonly Metric[] = ['quota', 'tokens', 'count'];
export type Cell = { quota: number; tokens: number; count: number };

/** Most buckets one chart draws. */
export const MAX_BUCKETS = 800;

export type DashboardSeries = {
  granularity: Granularity;
  timeZone: string;
  start: number;
  end: number;
  buckets: { start: number; label: string }[];
  /** models by total quota, largest first */
  models: { name: string; total: Cell }[];
  /** cells[model index][bucket index] */
  cells: Cell[][];
  totals: Cell;
  /** per bucket over all models */
  bucketTotals: Cell[];
  /** average requests and tokens per minute over the range */
  rpm: number;
  tpm: number;
  /** the total quota as the quota display rules write it */
  quotaText: string;
};

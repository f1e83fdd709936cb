/**
 * The routing table: enabled abilities by (group, model) in priority tiers, and every channel's config,
 * kept in memory and rebuilt from PostgreSQL periodically and on invalidation (like new-api's memory cache,
 * without its "retry may hit the same failed channel" fault: selection excludes channels already tried).
 */
import type { AbilityRecord, ChannelRecord } from './repo.ts';

type Candidate = { channelId: number; priority: number; weight: number };

/**
 * One priority level of a route, prepared for weighted picks in O(log n): `cumulative[i]` is the sum of
 * `weight + 10` over candidates 0..i (new-api's +10 smoothing, so weight 0 still gets traffic). A route may
 * hold a thousand channels; the first attempt of every request picks without scanning or allocating.
 */
type Tier = { priority: number; candidates: Candidate[]; cumulative: number[] };

export type CatalogSnapshot = {
  channels: Map<number, ChannelRecord>;
  /** `${group}\u0000${model}` → priority tiers, highest first. */
  routes: Map<string, Tier[]>;
  /** group → models routable in it (sorted). */
  modelsByGroup: Map<string, string[]>;
  loadedAt: number;
};

const routeKey = (group: string, model: string) => `${group}\u0000${model}`;

export function buildSnapshot(
  channels: ChannelRecord[],
  abilities: AbilityRecord[],
  now = Date.now(),
): CatalogSnapshot {
  const byId = new Map(channels.map((c) => [c.id, c]));
  const flat = new Map<string, Candidate[]>();
  const models = new Map<string, Set<string>>();
  for (const a of abilities) {
    const ch = byId.get(a.channelId);
    if (!ch || ch.status !== 1) continue;
    const key = routeKey(a.group, a.model);
    const list = flat.get(key) ?? [];
    if (list.length === 0) flat.set(key, list);
    list.push({ channelId: a.channelId, priority: a.priority, weight: a.weight });
    const set = models.get(a.group) ?? new Set<string>();
    if (set.size === 0) models.set(a.group, set);
    set.add(a.model);
  }
  const routes = new Map<string, Tier[]>();
  for (const [key, list] of flat) {
    list.sort((x, y) => y.priority - x.priority || x.channelId - y.channelId);
    const tiers: Tier[] = [];
    for (const c of list) {
      let tier = tiers[tiers.length - 1];
      if (!tier || tier.priority !== c.priority) {
        tier = { priority: c.priority, candidates: [], cumulative: [] };
        tiers.push(tier);
      }
      tier.candidates.push(c);
      tier.cumulative.push((tier.cumulative[tier.cumulative.length - 1] ?? 0) + c.weight + 10);
    }
    routes.set(key, tiers);
  }
  const modelsByGroup = new Map([...models].map(([g, s]) => [g, [...s].sort()]));
  return { channels: byId, routes, modelsByGroup, loadedAt: now };
}

/**
 * Picks the channel for one attempt: the highest priority tier that still has a channel not yet tried, then
 * weighted random inside it with new-api's +10 smoothing (weight 0 still gets traffic). Returns null when every
 * candidate has been tried.
 */
export function selectChannel(
  snapshot: CatalogSnapshot,
  group: string,
  model: string,
  tried: ReadonlySet<number>,
  random: () => number = Math.random,
): ChannelRecord | null {
  const tiers = snapshot.routes.get(routeKey(group, model));
  if (!tiers) return null;
  for (const tier of tiers) {
    const picked = tried.size === 0 ? pickWeighted(tier, random) : pickUntried(tier, tried, random);
    if (picked) return snapshot.channels.get(picked.channelId) ?? null;
  }
  return null;
}

/** Weighted pick over a whole tier: the first candidate whose cumulative weight exceeds the draw. */
function pickWeighted(tier: Tier, random: () => number): Candidate | undefined {
  const { cumulative, candidates } = tier;
  const r = random() * (cumulative[cumulative.length - 1] ?? 0);
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((cumulative[mid] as number) > r) hi = mid;
    else lo = mid + 1;
  }
  return candidates[lo];
}

/** Weighted pick among the tier's candidates not tried yet (retries only); undefined when none is left. */
function pickUntried(tier: Tier, tried: ReadonlySet<number>, random: () => number): Candidate | undefined {
  const open = tier.candidates.filter((c) => !tried.has(c.channelId));
  if (open.length === 0) return undefined;
  const total = open.reduce((s, c) => s + c.weight + 10, 0);
  let r = random() * total;
  for (const c of open) {
    r -= c.weight + 10;
    if (r < 0) return c;
  }
  return open[open.length - 1];
}

export function hasRoute(snapshot: CatalogSnapshot, group: string, model: string): boolean {
  return (snapshot.routes.get(routeKey(group, model))?.length ?? 0) > 0;
}

export class Catalog {
  #snapshot: CatalogSnapshot = buildSnapshot([], [], 0);
  #loading: Promise<void> | null = null;
  #next: Promise<void> | null = null;
  readonly #load: () => Promise<{ channels: ChannelRecord[]; abilities: AbilityRecord[] }>;

  constructor(load: () => Promise<{ channels: ChannelRecord[]; abilities: AbilityRecord[] }>) {
    this.#load = load;
  }

  get snapshot(): CatalogSnapshot {
    return this.#snapshot;
  }

  /**
   * Reloads from the database. Callers during a load share the next one, which starts when the running one
   * ends: the running load may have read the tables before the caller's change committed, so handing it out
   * would let the console believe a change applied that the relay only sees at the next periodic sync.
   */
  reload(): Promise<void> {
    if (this.#loading) {
      this.#next ??= this.#loading
        .catch(() => {})
        .then(() => {
          this.#next = null;
          return this.reload();
        });
      return this.#next;
    }
    this.#loading = (async () => {
      const { channels, abilities } = await this.#load();
      this.#snapshot = buildSnapshot(channels, abilities);
    })().finally(() => {
      this.#loading = null;
    });
    return this.#loading;
  }

  /** Applies a health change locally at once (the database write happens separately). */
  markStatus(channelId: number, status: number): void {
    const ch = this.#snapshot.channels.get(channelId);
    if (!ch || ch.status === status) return;
    const channels = [...this.#snapshot.channels.values()].map((c) =>
      c.id === channelId ? { ...c, status } : c,
    );
    const abilities: AbilityRecord[] = [];
    for (const [key, tiers] of this.#snapshot.routes) {
      const [group = '', model = ''] = key.split('\u0000');
      for (const tier of tiers) for (const c of tier.candidates) abilities.push({ group, model, ...c });
    }
    // Re-enabling needs the abilities of a channel that was not routable: rebuild from its own lists.
    if (status === 1) {
      for (const g of ch.groups)
        for (const m of ch.models)
          abilities.push({ group: g, model: m, channelId, priority: ch.priority, weight: ch.weight });
    }
    this.#snapshot = buildSnapshot(channels, abilities);
  }
}

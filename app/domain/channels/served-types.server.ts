/**
 * The channel types the console offers and accepts are the ones the relay serves (ListChannelTypes over gRPC):
 * a new adaptor in the relay's registry shows up in the channel form with nothing to change here.
 *
 * The answer is cached per relay address for CACHE_MS. When the relay cannot be asked (down, or not configured),
 * the last answer is used however old (`source: 'stale'`), else every labelled type (`source: 'unavailable'`)
 * and saving is not refused for want of the list; the form says so to the admin in both cases.
 */
import { CHANNEL_TYPES, type ChannelTypeOption, typeOptions } from '#app/domain/channels/constants.ts';
import type { RelaySync } from '#app/domain/relay-sync.server.ts';

export const CACHE_MS = 30_000;
const TIMEOUT_MS = 2_000;

export type ServedTypes = {
  /** The served type ids; null when the relay could not tell (nothing is refused then). */
  served: ReadonlySet<number> | null;
  source: 'relay' | 'stale' | 'unavailable';
};

const cache = new Map<string, { at: number; types: ReadonlySet<number> }>();

/** Forgets every cached answer (tests). */
export function clearServedTypesCache(): void {
  cache.clear();
}

export async function servedChannelTypes(ctx: RelaySync, now: number = Date.now()): Promise<ServedTypes> {
  const relay = ctx.relay;
  if (!relay) return { served: null, source: 'unavailable' };
  const hit = cache.get(relay.address);
  if (hit && now - hit.at < CACHE_MS) return { served: hit.types, source: 'relay' };
  try {
    const types = new Set((await relay.listChannelTypes({ timeoutMs: TIMEOUT_MS })).map((t) => t.type));
    cache.set(relay.address, { at: now, types });
    return { served: types, source: 'relay' };
  } catch (err) {
    console.warn(`[console] the relay's channel types are unavailable: ${(err as Error).message}`);
    return hit ? { served: hit.types, source: 'stale' } : { served: null, source: 'unavailable' };
  }
}

export type TypeChoice = {
  options: ChannelTypeOption[];
  /** 'stale' / 'unavailable': the form shows a warning that the list may offer types the relay cannot serve. */
  source: ServedTypes['source'];
};

/** The type options of the channel form (`keep`: the saved type of the channel being edited). */
export async function channelTypeChoice(ctx: RelaySync, keep?: number): Promise<TypeChoice> {
  const { served, source } = await servedChannelTypes(ctx);
  return {
    options: served
      ? typeOptions([...served], keep)
      : typeOptions(
          CHANNEL_TYPES.map((t) => t.value),
          keep,
        ),
    source,
  };
}

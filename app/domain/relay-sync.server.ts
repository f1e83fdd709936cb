import type { RelayClient } from '#app/grpc/relay-client.server.ts';

/** A domain ctx that may carry the relay client (DomainCtx does; ctxs built by hand in tests may not). */
export type RelaySync = { relay?: RelayClient | null };

/** Long enough for a healthy relay on the cluster network, short enough that a user never waits on a dead one. */
const INVALIDATE_TIMEOUT_MS = 2_000;

/**
 * Tells the relay to drop what it caches about these users and tokens (balances, status, group, limits), so a
 * console change applies to the very next model call instead of after the relay's periodic sync. Call it after
 * the change has committed. Best effort: it never throws, because the change itself has succeeded and the
 * relay's sync catches up anyway; failures (relay down, no relay configured) are logged and dropped.
 */
export async function syncRelayAccounts(
  ctx: RelaySync,
  change: { userIds?: readonly number[]; tokenIds?: readonly number[] },
): Promise<void> {
  const relay = ctx.relay;
  if (!relay) return;
  const userIds = [...new Set(change.userIds ?? [])].filter((id) => id > 0);
  const tokenIds = [...new Set(change.tokenIds ?? [])].filter((id) => id > 0);
  if (userIds.length === 0 && tokenIds.length === 0) return;
  try {
    await relay.invalidateAccounts({ userIds, tokenIds }, { timeoutMs: INVALIDATE_TIMEOUT_MS });
  } catch (err) {
    console.warn(
      `[console] relay invalidation of users [${userIds}] tokens [${tokenIds}] failed: ${(err as Error).message}`,
    );
  }
}

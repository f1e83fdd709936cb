/**
 * The channel calls that need the relay (seed 001 §7 Channel): test one or all, refresh the balance of one or all,
 * and list an upstream's models (a saved channel, or the form's values before saving). The console never calls an
 * upstream itself: the relay does, with its adaptors, and records test times and balances in the database.
 * Admin only (role >= 10, checked here too); every call writes an AuditEntry; channel keys never leave the server,
 * and messages that come back from an upstream are scrubbed of them.
 */
import type { AppLoadContext } from '@remix-run/server-runtime';
import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Channel } from '@switchyard/db/entities/channel.ts';
import { Role } from '@switchyard/db/entities/user.ts';
import { z } from 'zod';
import { channelKey, isHttpBaseUrl } from '#app/domain/channels/channels.server.ts';
import { DomainError, ForbiddenError, InputError, NotFoundError } from '#app/domain/errors.ts';
import { type DomainCtx, domainApi } from '#app/domain/http.server.ts';
import { intInput } from '#app/domain/input.ts';
import { redact, relayFailure } from '#app/domain/relay-errors.server.ts';
import type { ChannelBalanceUpdate, RelayClient } from '#app/grpc/relay-client.server.ts';

export type RelayOpsCtx = DomainCtx;

/** The routes' guard: authenticateApi (401) and role >= admin (403), then the handler inside the envelope. */
export function channelOpsApi(
  request: Request,
  context: AppLoadContext,
  handler: (ctx: RelayOpsCtx) => Promise<Response>,
): Promise<Response> {
  return domainApi(request, context, { minRole: Role.Admin }, handler);
}

/** A refusal that is the relay's (down, or the upstream failed): the envelope answers 200 + success false. */
export class RelayOpError extends DomainError {
  constructor(message: string) {
    super(message, 502);
  }
}

/** Statuses a test-all covers when none are named: enabled and auto-disabled (new-api's "test all"). */
const TEST_ALL_STATUSES = [1, 3];
const ALL_TIMEOUT_MS = 3_600_000;

function requireAdmin(ctx: RelayOpsCtx): RelayClient {
  if (!ctx.actor || ctx.actor.role < Role.Admin) throw new ForbiddenError();
  if (!ctx.relay) throw new RelayOpError('The relay service is not configured');
  return ctx.relay;
}

function keyLines(key: string): string[] {
  return key
    .split('\n')
    .map((k) => k.trim())
    .filter(Boolean);
}

/** The key lines of a saved channel, to scrub from upstream messages (none when the stored key does not open). */
async function secretsOf(ctx: RelayOpsCtx, channel: Pick<Channel, 'id' | 'key'>): Promise<string[]> {
  return keyLines(await channelKey(ctx, channel).catch(() => ''));
}

async function loadChannel(ctx: RelayOpsCtx, id: number): Promise<Channel> {
  const channel = id > 0 ? await ctx.em.findOne(Channel, { id }) : null;
  if (!channel) throw new NotFoundError(`channel ${id} does not exist`);
  return channel;
}

async function audit(ctx: RelayOpsCtx, action: string, targetId: number | string, after: unknown) {
  const em = ctx.em.fork();
  em.create(AuditEntry, {
    actorId: ctx.actor.id,
    action,
    targetType: 'channel',
    targetId: String(targetId),
    before: null,
    after: JSON.stringify(after),
    ip: ctx.ip,
  });
  await em.flush();
}

/**
 * Runs one relay call and records it: the AuditEntry is written whatever the outcome (the attempt itself is the
 * admin action). Relay errors become RelayOpError with a message that names no address and no key.
 */
async function relayCall<T>(
  ctx: RelayOpsCtx,
  relay: RelayClient,
  what: { action: string; targetId: number | string; detail?: Record<string, unknown>; secrets?: string[] },
  call: () => Promise<T>,
  outcome: (result: T) => Record<string, unknown>,
): Promise<T> {
  try {
    const result = await call();
    await audit(ctx, what.action, what.targetId, { ...what.detail, ...outcome(result) });
    return result;
  } catch (err) {
    const failure = relayFailure(err, relay.address);
    if (!failure) throw err;
    const message = redact(failure.message, what.secrets ?? []);
    await audit(ctx, what.action, what.targetId, { ...what.detail, success: false, message });
    if (failure.code === 'not_found') throw new NotFoundError(message);
    throw new RelayOpError(message);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Test

export type ChannelTestAnswer = { success: boolean; message: string /** seconds */; time: number };

/**
 * GET /api/channel/test/{id}?model=: one test request through the channel (the relay picks the test model when
 * `model` is empty, records the response time, and may auto-disable or re-enable the channel).
 */
export async function testChannel(ctx: RelayOpsCtx, id: number, model: string): Promise<ChannelTestAnswer> {
  const relay = requireAdmin(ctx);
  const channel = await loadChannel(ctx, id);
  const secrets = await secretsOf(ctx, channel);
  const result = await relayCall(
    ctx,
    relay,
    { action: 'channel.test', targetId: id, detail: { model }, secrets },
    () => relay.testChannel(id, model.slice(0, 128)),
    (r) => ({ tested_model: r.model, success: r.success, response_time_ms: r.responseTimeMs }),
  );
  return {
    success: result.success,
    message: result.success ? '' : redact(result.message || 'channel test failed', secrets),
    time: Math.round(result.responseTimeMs) / 1000,
  };
}

/** The test-all run of this process, if one is going (new-api allows one at a time). */
let testAllRun: Promise<void> | null = null;

/** For tests: resolves when the background test-all of this process (if any) has finished. */
export function testAllSettled(): Promise<void> {
  return testAllRun ?? Promise.resolve();
}

/**
 * GET /api/channel/test: starts testing every enabled and auto-disabled channel in the background and answers at
 * once (as new-api does); results land in each channel's response time and status (the relay may auto-disable
 * or re-enable channels as it goes). A second call while a run is going is refused.
 */
export async function startTestAllChannels(ctx: RelayOpsCtx): Promise<string> {
  const relay = requireAdmin(ctx);
  if (testAllRun) throw new InputError('A test of all channels is already running');
  // Checked up front so that "relay down" is an answer, not a silent background failure.
  try {
    await relay.getRuntimeInfo({ timeoutMs: 3_000 });
  } catch (err) {
    const failure = relayFailure(err, relay.address);
    if (!failure) throw err;
    await audit(ctx, 'channel.test_all', 'all', { success: false, message: failure.message });
    throw new RelayOpError(failure.message);
  }
  await audit(ctx, 'channel.test_all', 'all', { started: true });
  const run = (async () => {
    let tested = 0;
    let failed = 0;
    try {
      for await (const r of relay.testAllChannels(TEST_ALL_STATUSES, { timeoutMs: ALL_TIMEOUT_MS })) {
        tested++;
        if (!r.success) failed++;
      }
      console.log(`[console] channel test of all: ${tested} tested, ${failed} failed`);
    } catch (err) {
      console.warn(`[console] channel test of all stopped after ${tested}: ${(err as Error).message}`);
    }
  })().finally(() => {
    testAllRun = null;
  });
  testAllRun = run;
  return 'The channel test has started; refresh the list to see the results';
}

// ---------------------------------------------------------------------------------------------------------------
// Balance

/** GET /api/channel/update_balance/{id}/: the upstream's balance in USD (also stored on the channel). */
export async function updateChannelBalance(ctx: RelayOpsCtx, id: number): Promise<number> {
  const relay = requireAdmin(ctx);
  const channel = await loadChannel(ctx, id);
  const secrets = await secretsOf(ctx, channel);
  const result = await relayCall(
    ctx,
    relay,
    { action: 'channel.update_balance', targetId: id, secrets },
    () => relay.updateChannelBalance(id),
    (r) => ({
      success: r.success,
      balance: r.balance,
      ...(r.success ? {} : { message: redact(r.message, secrets) }),
    }),
  );
  if (!result.success) throw new RelayOpError(redact(result.message || 'balance update failed', secrets));
  return result.balance;
}

export type BalanceSummary = {
  total: number;
  succeeded: number;
  failed: { id: number; message: string }[];
};

/**
 * GET /api/channel/update_balance: refreshes every enabled channel's balance and answers when all are done (as
 * new-api does); channels whose type has no balance API count as failed with the reason.
 */
export async function updateAllChannelBalances(ctx: RelayOpsCtx): Promise<BalanceSummary> {
  const relay = requireAdmin(ctx);
  const keys = new Map(
    await Promise.all(
      (await ctx.em.find(Channel, { status: 1 }, { fields: ['id', 'key'] })).map(
        async (c) => [c.id, await secretsOf(ctx, c)] as const,
      ),
    ),
  );
  return relayCall(
    ctx,
    relay,
    { action: 'channel.update_balance_all', targetId: 'all' },
    async () => {
      const results: ChannelBalanceUpdate[] = [];
      for await (const r of relay.updateAllChannelBalances({ timeoutMs: ALL_TIMEOUT_MS })) results.push(r);
      return {
        total: results.length,
        succeeded: results.filter((r) => r.success).length,
        failed: results
          .filter((r) => !r.success)
          .map((r) => ({ id: r.channelId, message: redact(r.message, keys.get(r.channelId) ?? []) })),
      };
    },
    (s) => ({ total: s.total, succeeded: s.succeeded, failed: s.failed.length }),
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Upstream models

/** GET /api/channel/fetch_models/{id}: the model ids the saved channel's upstream lists. */
export async function fetchChannelModels(ctx: RelayOpsCtx, id: number): Promise<string[]> {
  const relay = requireAdmin(ctx);
  const channel = await loadChannel(ctx, id);
  return relayCall(
    ctx,
    relay,
    { action: 'channel.fetch_models', targetId: id, secrets: await secretsOf(ctx, channel) },
    () => relay.fetchUpstreamModels({ channelId: id }),
    (models) => ({ success: true, count: models.length }),
  );
}

const text = z
  .string()
  .nullish()
  .transform((v) => (v ?? '').trim());

/** POST /api/channel/fetch_models: the channel form's values (snake_case, as the form sends them). */
export const unsavedChannelSchema = z.object({
  type: intInput({ min: 0, max: 10_000 }),
  key: z.string().trim().min(1),
  base_url: text,
  other: text,
  setting: text,
  openai_organization: text,
});

/** POST /api/channel/fetch_models {base_url, type, key, other?, setting?}: models of a channel not saved yet. */
export async function fetchModelsForForm(ctx: RelayOpsCtx, input: unknown): Promise<string[]> {
  const relay = requireAdmin(ctx);
  const parsed = unsavedChannelSchema.safeParse(input);
  if (!parsed.success) {
    const fieldErrors: Record<string, string[]> = {};
    for (const issue of parsed.error.issues) fieldErrors[String(issue.path[0] ?? '')] = [];
    throw new InputError('type and key are required', fieldErrors);
  }
  const v = parsed.data;
  if (v.base_url && !isHttpBaseUrl(v.base_url))
    throw new InputError(ctx.t('channels:errors.baseUrlInvalid'), { base_url: [] });
  return relayCall(
    ctx,
    relay,
    {
      action: 'channel.fetch_models',
      targetId: 'unsaved',
      // The key is never recorded, only what identifies the upstream.
      detail: { type: v.type, base_url: v.base_url },
      secrets: keyLines(v.key),
    },
    () =>
      relay.fetchUpstreamModels({
        type: v.type,
        key: v.key,
        baseUrl: v.base_url,
        other: v.other,
        setting: v.setting,
        openaiOrganization: v.openai_organization,
      }),
    (models) => ({ success: true, count: models.length }),
  );
}

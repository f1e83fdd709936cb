/**
 * The console side of a Switchyard run (child process): a fresh PostgreSQL database with migrations, the
 * console's Billing gRPC service on it (the relay bills every call through it), and the seeded accounts and
 * channels pointing at the bench fake. Reuses the integration harness (tests/integration/relay-stack.ts) with no
 * relay of its own: the relay runs in its own process (relay.ts) so its CPU and memory can be measured alone.
 *
 * Two shapes:
 * - default: one user, one token, one channel (the plain Switchyard target and the soak);
 * - `--scale`: 10,000 users with one token each and 1,000 channels serving gpt-4o-mini (issue 7's "scale of
 *   configuration"), seeded with set-based SQL so it takes seconds. This console also talks to its relay the
 *   way the product's does (RELAY_GRPC_URL, server/console.ts): admin changes go through the same domain
 *   functions the admin pages call, which notify the relay.
 *
 * IPC: sends {ready, databaseUrl, billingAddress, key, userId, tokenId} (scale: keys, seedMs instead of key).
 * Ops: settle (Billing settle rate), snapshot and reconcile (billing figures for the soak), disableToken,
 * createChannel and setChannelStatus (scale: admin changes), close (drops the database).
 */

import { priceContent, priceDetails, priceTablesFrom, resolvePrice } from '@switchyard/relay/core/pricing.ts';
import { usage as makeUsage } from '@switchyard/relay/core/usage.ts';
import { reportUsage, type UsageEventInput, UsageKind } from '#app/domain/billing/billing.server.ts';
import {
  type ChannelsCtx,
  createChannelSchema,
  createChannels,
  parseInput as parseChannelInput,
  setChannelStatus,
} from '#app/domain/channels/channels.server.ts';
import { setTokenStatus, type TokensCtx } from '#app/domain/tokens/tokens.server.ts';
import { createRelayClient, type RelayClient } from '#app/grpc/relay-client.server.ts';
import { i18next } from '#app/i18n/i18n.server.ts';
import {
  type Stack,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from '#tests/integration/relay-stack.ts';

const fakeUrl = process.argv[2] ?? '';
const scale = process.argv.includes('--scale');
/** The scale shape (issue 7). */
const USERS = 10_000;
const CHANNELS = 1_000;
const QUOTA = 2_000_000_000;

const stack: Stack = await startStack({
  suffix: scale ? 'bench10k' : 'bench',
  relays: 0,
  // The runner gives its console and relay one service secret (ADR 034).
  ...(process.env.INTERNAL_API_SECRET
    ? { env: { INTERNAL_API_SECRET: process.env.INTERNAL_API_SECRET } }
    : {}),
});
await setOptions(stack, {
  // gpt-bench-new is the model of the channel the reload test creates: priced up front so that only routing
  // decides whether it is served.
  ModelRatio: JSON.stringify({ 'gpt-4o-mini': 0.075, 'gpt-bench-new': 0.075 }),
  CompletionRatio: JSON.stringify({ 'gpt-4o-mini': 4 }),
  // The per-user request limit runs on every call (one Redis script), with room for the whole run.
  ModelRequestRateLimitEnabled: 'true',
  ModelRequestRateLimitDurationMinutes: '1',
  ModelRequestRateLimitCount: '100000000',
  ModelRequestRateLimitSuccessCount: '100000000',
  LogConsumeEnabled: 'true',
});

let user = { id: 0 };
let token = { id: 0, key: '' };
let channel = { id: 0 };
let relay: RelayClient | null = null;
let admin = { id: 0, username: '' };

if (!scale) {
  user = await seedUser(stack, { quota: QUOTA });
  token = await seedToken(stack, user.id, { remainQuota: QUOTA });
  channel = await seedChannel(stack, { baseUrl: fakeUrl, models: ['gpt-4o-mini'] });
  process.send?.({
    ready: true,
    databaseUrl: stack.db.url,
    billingAddress: stack.billing.address,
    key: token.key,
    userId: user.id,
    tokenId: token.id,
  });
} else {
  const t0 = performance.now();
  const keys = await seedScale();
  const seedMs = performance.now() - t0;
  admin = await seedUser(stack, { quota: 0, role: 10 });
  // Lazy connection (like the product's console): the relay starts after this database exists.
  relay = process.env.RELAY_GRPC_URL
    ? createRelayClient(process.env.RELAY_GRPC_URL, { internalSecret: stack.internalSecret })
    : null;
  process.send?.({
    ready: true,
    databaseUrl: stack.db.url,
    billingAddress: stack.billing.address,
    keys,
    seedMs,
  });
}

/**
 * 10,000 users, one token each (quota for the whole run) and 1,000 enabled channels on the fake serving
 * gpt-4o-mini, each with its ability row (what seedChannel and the console's rebuildAbilities write: one row per
 * group × model). A quarter of the channels get priority 1 (the tier that serves) and weights vary 0-9, so
 * selection works through a real tier and weighted pick. Set-based inserts: seconds, not minutes.
 */
async function seedScale(): Promise<string[]> {
  await stack.sql(
    `insert into users (username, display_name, aff_code, "group", quota, role, status, password_hash, setting, email)
     select 'bu' || i, 'bu' || i, 'ba' || i, 'default', ?, 1, 1, '', '', '' from generate_series(1, ?) as i`,
    [QUOTA, USERS],
  );
  // Keys like the console's: 48 random-looking characters, no '-' (it separates a channel pin).
  const rows = await stack.sql<{ key: string }>(
    `insert into tokens (user_id, key, name, status, remain_quota, used_quota, unlimited_quota, expired_time,
       created_time, accessed_time, model_limits_enabled, model_limits, allow_ips, "group")
     select id, substr(md5(random()::text || id::text) || md5(clock_timestamp()::text || id::text), 1, 48),
       'bench-' || id, 1, ?, 0, false, -1, 0, 0, false, '', '', ''
     from users where username like 'bu%' order by id
     returning key`,
    [QUOTA],
  );
  await stack.sql(
    `insert into channels (type, name, key, base_url, other, model_mapping, status_code_mapping, setting, models,
       "group", auto_ban, test_model, priority, weight, status, response_time, used_quota, balance,
       balance_updated_time, created_time, test_time, other_info, max_input_tokens)
     select 1, 'bench-ch-' || i, 'sk-upstream-' || i, ?, '', '', '', '', 'gpt-4o-mini', 'default', 1, '',
       case when i % 4 = 0 then 1 else 0 end, i % 10, 1, 0, 0, 0, 0, 0, 0, '', 0
     from generate_series(1, ?) as i`,
    [fakeUrl, CHANNELS],
  );
  await stack.sql(
    `insert into abilities ("group", model, channel_id, enabled, priority, weight)
     select 'default', 'gpt-4o-mini', id, true, priority, weight from channels`,
  );
  await stack.sql('analyze users; analyze tokens; analyze channels; analyze abilities');
  return rows.map((r) => r.key);
}

/** A domain ctx as the admin pages build one (createRequestCtx), for `actor`. */
async function ctxFor(actor: {
  id: number;
  username: string;
  role: number;
}): Promise<TokensCtx & ChannelsCtx> {
  return {
    em: stack.orm.em.fork(),
    actor: {
      id: actor.id,
      username: actor.username,
      displayName: actor.username,
      role: actor.role,
      group: 'default',
    },
    relay,
    options: stack.options,
    secrets: stack.secrets,
    t: await i18next.getFixedT('en', 'common'),
    ip: '127.0.0.1',
  };
}

/** The token's owner disables it (PUT /api/token/?status_only=true): setTokenStatus, then the relay notice. */
async function disableToken(key: string) {
  const [row] = await stack.sql<{ id: number; user_id: number; username: string }>(
    'select t.id, t.user_id, u.username from tokens t join users u on u.id = t.user_id where t.key = ?',
    [key],
  );
  if (!row) throw new Error('no such token');
  const ctx = await ctxFor({ id: Number(row.user_id), username: row.username, role: 1 });
  const t0 = performance.now();
  await setTokenStatus(ctx, { id: Number(row.id), status: 2 });
  return { tokenId: Number(row.id), domainMs: performance.now() - t0 };
}

/** An admin adds a channel (POST /api/channel/): createChannels, then the relay's routing reload. */
async function createChannel(model: string) {
  const ctx = await ctxFor({ ...admin, role: 10 });
  const input = parseChannelInput(ctx, createChannelSchema, {
    name: `bench-new-${Date.now()}`,
    type: 1,
    key: 'sk-upstream-new',
    base_url: fakeUrl,
    models: model,
    group: 'default',
  });
  const t0 = performance.now();
  const [id] = await createChannels(ctx, input);
  return { channelId: id, domainMs: performance.now() - t0 };
}

/** An admin enables (1) or disables (2) a channel from the list (the row button): setChannelStatus. */
async function channelStatus(id: number, status: number) {
  const ctx = await ctxFor({ ...admin, role: 10 });
  const t0 = performance.now();
  await setChannelStatus(ctx, id, status);
  return { channelId: id, domainMs: performance.now() - t0 };
}

/** The plain stack's billing state: the user's and token's balances and the newest log id. */
async function snapshot() {
  const [u] = await stack.sql<{ quota: string; used_quota: string }>(
    'select quota, used_quota from users where id = ?',
    [user.id],
  );
  const [t] = await stack.sql<{ remain_quota: string; used_quota: string }>(
    'select remain_quota, used_quota from tokens where id = ?',
    [token.id],
  );
  const [l] = await stack.sql<{ max: string | null }>('select max(id) as max from logs');
  return {
    userQuota: Number(u?.quota),
    userUsedQuota: Number(u?.used_quota),
    tokenRemainQuota: Number(t?.remain_quota),
    tokenUsedQuota: Number(t?.used_quota),
    maxLogId: Number(l?.max ?? 0),
  };
}

/**
 * The consume logs after `sinceId` (the soak window), aggregated in SQL: totals, request id uniqueness, and
 * (prompt, completion, stream, quota) groups so the runner can price every distinct usage by hand.
 */
async function reconcile(sinceId: number) {
  const [tot] = await stack.sql<Record<string, string>>(
    `select count(*) as rows, count(distinct request_id) as ids, count(request_id) as with_id,
       coalesce(sum(quota), 0) as quota, coalesce(sum(prompt_tokens), 0) as prompt,
       coalesce(sum(completion_tokens), 0) as completion,
       count(*) filter (where user_id <> ? or token_id <> ?) as foreign_rows
     from logs where id > ? and type = 2`,
    [user.id, token.id, sinceId],
  );
  const groups = await stack.sql<Record<string, string | boolean>>(
    `select prompt_tokens, completion_tokens, is_stream, model_name, quota, count(*) as n from logs
     where id > ? and type = 2 group by 1, 2, 3, 4, 5 order by n desc`,
    [sinceId],
  );
  const [other] = await stack.sql<{ n: string }>(
    'select count(*) as n from logs where id > ? and type <> 2',
    [sinceId],
  );
  return {
    rows: Number(tot?.rows),
    distinctRequestIds: Number(tot?.ids),
    rowsWithRequestId: Number(tot?.with_id),
    sumQuota: Number(tot?.quota),
    sumPromptTokens: Number(tot?.prompt),
    sumCompletionTokens: Number(tot?.completion),
    rowsOfOtherAccounts: Number(tot?.foreign_rows),
    nonConsumeRows: Number(other?.n),
    groups: groups.map((g) => ({
      promptTokens: Number(g.prompt_tokens),
      completionTokens: Number(g.completion_tokens),
      isStream: g.is_stream === true,
      model: String(g.model_name),
      quota: Number(g.quota),
      n: Number(g.n),
    })),
  };
}

/** What the relay writes into a priced gpt-4o-mini call's event (the relay's own pricing functions). */
function relayDetails(channelId: number) {
  const price = resolvePrice(priceTablesFrom(stack.options), 'gpt-4o-mini', 'default');
  if (!price) throw new Error('gpt-4o-mini has no price in the bench options');
  const u = makeUsage({ promptTokens: 12, completionTokens: 9 });
  return {
    otherJson: JSON.stringify(
      priceDetails(price, u, {
        frtMs: 0,
        channelIds: [channelId],
        requestModel: 'gpt-4o-mini',
        usageEstimated: false,
      }),
    ),
    content: priceContent(price, u),
  };
}

/** Settle runs so far: request ids stay unique across runs of one console. */
let settleRuns = 0;

/** Bills `batches` x `batchSize` events (sequentially, `parallel` callers at once) and times it. */
async function settle(batches: number, batchSize: number, parallel: number) {
  const run0 = settleRuns++;
  const details = relayDetails(channel.id);
  const deps = { em: () => stack.orm.em.fork(), options: stack.options };
  let next = 0;
  const start = performance.now();
  let accepted = 0;
  const run = async () => {
    for (;;) {
      const b = next++;
      if (b >= batches) return;
      const events: UsageEventInput[] = Array.from({ length: batchSize }, (_, i) => ({
        requestId: `bench-${process.pid}-${run0}-${b}-${i}`,
        userId: user.id,
        tokenId: token.id,
        channelIds: [channel.id],
        modelName: 'gpt-4o-mini',
        upstreamModel: 'gpt-4o-mini',
        usage: { promptTokens: 12, completionTokens: 9 },
        quota: 4,
        isStream: false,
        useTimeMs: 3,
        frtMs: 0,
        group: 'default',
        otherJson: details.otherJson,
        createdAtMs: Date.now(),
        ip: '127.0.0.1',
        tokenName: '',
        kind: UsageKind.Consume,
        content: details.content,
      }));
      const acks = await reportUsage(deps, events);
      accepted += acks.filter((a) => a.status === 'accepted').length;
    }
  };
  await Promise.all(Array.from({ length: parallel }, run));
  const seconds = (performance.now() - start) / 1000;
  return {
    events: batches * batchSize,
    accepted,
    seconds,
    perSecond: accepted / seconds,
    batchSize,
    parallel,
  };
}

type Msg = {
  op: string;
  batches?: number;
  batchSize?: number;
  parallel?: number;
  sinceId?: number;
  key?: string;
  model?: string;
  id?: number;
  status?: number;
};

/** Runs one op and answers {[op]: result} (or {[op]: {error}}). */
async function answer(op: string, fn: () => Promise<unknown>) {
  try {
    process.send?.({ [op]: await fn() });
  } catch (err) {
    process.send?.({ [op]: { error: String(err) } });
  }
}

process.on('message', async (msg: Msg) => {
  if (msg.op === 'settle')
    await answer('settle', () => settle(msg.batches ?? 10, msg.batchSize ?? 1000, msg.parallel ?? 1));
  else if (msg.op === 'snapshot') await answer('snapshot', snapshot);
  else if (msg.op === 'reconcile') await answer('reconcile', () => reconcile(msg.sinceId ?? 0));
  else if (msg.op === 'disableToken') await answer('disableToken', () => disableToken(msg.key ?? ''));
  else if (msg.op === 'createChannel') await answer('createChannel', () => createChannel(msg.model ?? ''));
  else if (msg.op === 'setChannelStatus')
    await answer('setChannelStatus', () => channelStatus(msg.id ?? 0, msg.status ?? 2));
  else if (msg.op === 'close') {
    relay?.close();
    await stack.close().catch(() => {});
    process.send?.({ closed: true });
    process.exit(0);
  }
});
process.on('disconnect', () => {
  relay?.close();
  void stack.close().finally(() => process.exit(0));
});

/**
 * The console side of the Switchyard run (child process): a fresh PostgreSQL database with migrations, the
 * console's Billing gRPC service on it (the relay bills every call through it), and the seeded user, token and
 * channel pointing at the bench fake. Reuses the integration harness (tests/integration/relay-stack.ts) with no
 * relay of its own: the relay runs in its own process (relay.ts) so its CPU and memory can be measured alone.
 *
 * IPC: sends {ready, databaseUrl, billingAddress, key, userId}; answers {settle: {...}} to {op:'settle'} with the
 * Billing settle rate (reportUsage, the domain function the gRPC handler calls); {op:'close'} drops the database.
 */
import { reportUsage, type UsageEventInput, UsageKind } from '#app/domain/billing/billing.server.ts';
import {
  type Stack,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from '#tests/integration/relay-stack.ts';

const fakeUrl = process.argv[2] ?? '';
const stack: Stack = await startStack({ suffix: 'bench', relays: 0 });
const user = await seedUser(stack, { quota: 2_000_000_000 });
const token = await seedToken(stack, user.id, { remainQuota: 2_000_000_000 });
const channel = await seedChannel(stack, { baseUrl: fakeUrl, models: ['gpt-4o-mini'] });
await setOptions(stack, {
  ModelRatio: JSON.stringify({ 'gpt-4o-mini': 0.075 }),
  CompletionRatio: JSON.stringify({ 'gpt-4o-mini': 4 }),
  // The per-user request limit runs on every call (one Redis script), with room for the whole run.
  ModelRequestRateLimitEnabled: 'true',
  ModelRequestRateLimitDurationMinutes: '1',
  ModelRequestRateLimitCount: '100000000',
  ModelRequestRateLimitSuccessCount: '100000000',
  LogConsumeEnabled: 'true',
});

process.send?.({
  ready: true,
  databaseUrl: stack.db.url,
  billingAddress: stack.billing.address,
  key: token.key,
  userId: user.id,
});

/** Bills `batches` x `batchSize` events (sequentially, `parallel` callers at once) and times it. */
async function settle(batches: number, batchSize: number, parallel: number) {
  const deps = { em: () => stack.orm.em.fork(), options: stack.options };
  let next = 0;
  const start = performance.now();
  let accepted = 0;
  const run = async () => {
    for (;;) {
      const b = next++;
      if (b >= batches) return;
      const events: UsageEventInput[] = Array.from({ length: batchSize }, (_, i) => ({
        requestId: `bench-${process.pid}-${b}-${i}`,
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
        otherJson: '',
        createdAtMs: Date.now(),
        ip: '127.0.0.1',
        tokenName: 'bench',
        kind: UsageKind.Consume,
        content: '',
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

process.on(
  'message',
  async (msg: { op: string; batches?: number; batchSize?: number; parallel?: number }) => {
    if (msg.op === 'settle') {
      try {
        const r = await settle(msg.batches ?? 10, msg.batchSize ?? 1000, msg.parallel ?? 1);
        process.send?.({ settle: r });
      } catch (err) {
        process.send?.({ settle: { error: String(err) } });
      }
    } else if (msg.op === 'close') {
      await stack.close().catch(() => {});
      process.send?.({ closed: true });
      process.exit(0);
    }
  },
);
process.on('disconnect', () => {
  void stack.close().finally(() => process.exit(0));
});

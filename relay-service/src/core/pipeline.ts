/**
 * Assembles the relay pipeline from its parts: PostgreSQL (repo), options, the routing table, the account
 * cache, the relay core, channel operations and the outbox forwarder, with their refresh timers. One object the
 * HTTP fronts and the gRPC service share.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { OptionService } from '@switchyard/db/options/service.ts';
import { initOrm } from '@switchyard/db/orm.ts';
import { createPgPubSub, createRedisPubSub, type PubSub } from '@switchyard/db/pubsub.ts';
import { assertSecretsReadable, createSecretBox, SecretsError } from '@switchyard/db/security/secrets.ts';
import type { RelayConfig } from '../config.ts';
import { type BillingReporter, createBillingReporter } from '../grpc/billing-client.ts';
import { type GrpcSecurity, grpcSecurityFrom } from '../grpc/security.ts';
import type { Logger } from '../log.ts';
import { PgOutboxJournal } from '../store/journal.ts';
import { MemoryStore } from '../store/memory.ts';
import type { RelayStore } from '../store/types.ts';
import { TaskCharges } from '../tasks/charge.ts';
import { MidjourneyPoller } from '../tasks/midjourney/poller.ts';
import { createMidjourneyRepo } from '../tasks/midjourney/repo.ts';
import { MidjourneyService } from '../tasks/midjourney/service.ts';
import { SunoPoller } from '../tasks/suno/poller.ts';
import { createSunoRepo } from '../tasks/suno/repo.ts';
import { SunoService } from '../tasks/suno/service.ts';
import { Accounts } from './auth.ts';
import { Catalog } from './catalog.ts';
import { ChannelOps } from './channels.ts';
import { OutboxForwarder } from './outbox.ts';
import { RelayCore } from './relay.ts';
import { createRepo, type Repo, sqlFor } from './repo.ts';
import { startScheduler } from './scheduler.ts';

export type RelayPipeline = {
  core: RelayCore;
  accounts: Accounts;
  catalog: Catalog;
  options: OptionService;
  repo: Repo;
  channels: ChannelOps;
  outbox: OutboxForwarder;
  store: RelayStore;
  /** Midjourney submits and reads (tasks/midjourney). */
  midjourney: MidjourneyService;
  /** The Midjourney task poller (run by the scheduler on the leader; tests call pollOnce). */
  midjourneyPoller: MidjourneyPoller;
  /** Suno submits and reads (tasks/suno). */
  suno: SunoService;
  /** The Suno task poller (run by the scheduler on the leader; tests call pollOnce). */
  sunoPoller: SunoPoller;
  /** Drops cached accounts/balances; reloads channels and options when `channels`. */
  invalidate(userIds: readonly number[], tokenIds: readonly number[], channels: boolean): Promise<void>;
  stop(): Promise<void>;
};

export type PipelineOptions = {
  cfg: RelayConfig;
  store: RelayStore;
  log: Logger;
  fetch?: typeof fetch;
  /** Billing reporter override (tests); default: gRPC to BILLING_GRPC_URL when set. */
  reporter?: BillingReporter | null;
  /** The service secret and TLS files Billing calls carry (default: read from cfg). */
  security?: GrpcSecurity;
  /** This relay's id (leader leases). */
  instanceId: string;
  /** How long start waits for the schema to exist (default 120 s). */
  schemaWaitMs?: number;
};

export async function createRelayPipeline(opts: PipelineOptions): Promise<RelayPipeline> {
  const { cfg, store, log } = opts;
  if (!cfg.DATABASE_URL) throw new Error('DATABASE_URL is required for the relay pipeline');
  const secrets = await createSecretBox({ key: cfg.SECRETS_KEY, previous: cfg.SECRETS_KEY_PREVIOUS });
  const orm: MikroORM = await initOrm(cfg.DATABASE_URL, { poolMax: cfg.DATABASE_POOL_MAX });
  let pubsub: PubSub | null = null;
  try {
    // Option changes reach this relay as they are made: over Redis when there is one, else over PostgreSQL's
    // LISTEN/NOTIFY on the same database (ADR 020).
    pubsub = cfg.REDIS_URL ? await createRedisPubSub(cfg.REDIS_URL) : await createPgPubSub(cfg.DATABASE_URL);
    const options = new OptionService({ orm, pubsub, secrets });
    const repo = createRepo(sqlFor(orm), secrets, { log: (m) => log.warn(m) });
    const catalog = new Catalog(async () => ({
      channels: await repo.channels(),
      abilities: await repo.enabledAbilities(),
    }));
    // The console (or the migrate Job) may still be creating the schema when the relay starts: wait for it.
    const waitUntil = Date.now() + (opts.schemaWaitMs ?? 120_000);
    for (let attempt = 0; ; attempt++) {
      try {
        // Refuse to start when stored secrets are sealed with a key this process does not have (ADR 019).
        await assertSecretsReadable(sqlFor(orm), secrets);
        await options.load();
        await catalog.reload();
        if (store instanceof MemoryStore) {
          // The in-process store's outbox lives on in PostgreSQL (ADR 014): what a previous process settled but
          // Billing never acknowledged is loaded here and reported again by the sweep.
          const restored = await store.useJournal(new PgOutboxJournal(sqlFor(orm)), {
            onError: (e) => log.warn(`outbox journal write failed: ${(e as Error).message}`),
          });
          if (restored > 0) log.info(`outbox: ${restored} unacknowledged usage events restored from disk`);
        }
        break;
      } catch (err) {
        if (err instanceof SecretsError || Date.now() > waitUntil) throw err;
        if (attempt === 0) log.info(`waiting for the database schema (${(err as Error).message})`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    const accounts = new Accounts(repo, cfg.RELAY_ACCOUNT_TTL_MS);
    accounts.start();
    const reporter =
      opts.reporter !== undefined
        ? opts.reporter
        : cfg.BILLING_GRPC_URL
          ? createBillingReporter(cfg.BILLING_GRPC_URL, opts.security ?? grpcSecurityFrom(cfg))
          : null;
    if (!reporter)
      log.warn('BILLING_GRPC_URL is not set: usage stays in the outbox until Billing is configured');
    const outbox = new OutboxForwarder({
      store,
      reporter,
      log,
      sweepAfterMs: cfg.RELAY_OUTBOX_SWEEP_AFTER_MS,
    });
    const core = new RelayCore({
      store,
      repo,
      catalog,
      options,
      outbox,
      log,
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
      upstreamTimeoutMs: cfg.RELAY_UPSTREAM_TIMEOUT_MS,
      streamStallMs: cfg.RELAY_STREAM_STALL_MS,
      balanceTtlMs: cfg.RELAY_BALANCE_TTL_MS,
    });
    const channels = new ChannelOps({
      repo,
      catalog,
      options,
      store,
      outbox,
      core,
      log,
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
    });
    const mjRepo = createMidjourneyRepo(sqlFor(orm));
    const charges = new TaskCharges({ core, store, options, outbox, log });
    const midjourney = new MidjourneyService({
      repo: mjRepo,
      charges,
      catalog,
      options,
      log,
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
      upstreamTimeoutMs: cfg.RELAY_UPSTREAM_TIMEOUT_MS,
      disableChannel: (channel, reason) => core.disableChannel(channel, reason),
    });
    const midjourneyPoller = new MidjourneyPoller({
      repo: mjRepo,
      catalog,
      store,
      reporter,
      log,
      invalidateAccounts: (users, tokens) => accounts.invalidate(users, tokens),
      timeoutMs: cfg.RELAY_TASK_TIMEOUT_MS,
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
    });
    const sunoRepo = createSunoRepo(sqlFor(orm));
    const suno = new SunoService({
      repo: sunoRepo,
      charges,
      catalog,
      options,
      log,
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
      upstreamTimeoutMs: cfg.RELAY_UPSTREAM_TIMEOUT_MS,
    });
    const sunoPoller = new SunoPoller({
      repo: sunoRepo,
      catalog,
      store,
      reporter,
      log,
      invalidateAccounts: (users, tokens) => accounts.invalidate(users, tokens),
      timeoutMs: cfg.RELAY_TASK_TIMEOUT_MS,
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
    });
    outbox.start();
    const scheduler = startScheduler({
      store,
      holder: opts.instanceId,
      log,
      jobs: [
        {
          name: 'channel-tests',
          everyMs: cfg.RELAY_CHANNEL_TEST_INTERVAL_MS,
          run: async () => {
            for await (const r of channels.testAll())
              if (!r.success) log.info(`scheduled test of #${r.channelId}: ${r.message}`);
          },
        },
        {
          name: 'channel-balances',
          everyMs: cfg.RELAY_BALANCE_UPDATE_INTERVAL_MS,
          run: async () => {
            for await (const _ of channels.updateAllBalances());
          },
        },
        {
          name: 'midjourney-poll',
          everyMs: cfg.RELAY_TASK_POLL_INTERVAL_MS,
          run: async () => {
            await midjourneyPoller.pollOnce();
          },
        },
        {
          name: 'suno-poll',
          everyMs: cfg.RELAY_TASK_POLL_INTERVAL_MS,
          run: async () => {
            await sunoPoller.pollOnce();
          },
        },
      ],
    });

    // Periodic refresh: channel health written by other relays, console edits without an invalidation, and
    // option changes whose announcement was lost (pub/sub delivers at most once, e.g. during a reconnect).
    const sync = setInterval(() => {
      void Promise.all([catalog.reload(), options.load()]).catch((e) =>
        log.warn(`routing table refresh failed: ${(e as Error).message}`),
      );
    }, cfg.RELAY_SYNC_INTERVAL_MS);
    sync.unref?.();

    return {
      core,
      accounts,
      catalog,
      options,
      repo,
      channels,
      outbox,
      store,
      midjourney,
      midjourneyPoller,
      suno,
      sunoPoller,
      async invalidate(userIds, tokenIds, reloadChannels) {
        accounts.invalidate(userIds, tokenIds);
        await Promise.all([
          ...userIds.map((id) => store.invalidateBalance({ kind: 'user', id })),
          ...tokenIds.map((id) => store.invalidateBalance({ kind: 'token', id })),
        ]);
        if (reloadChannels) await Promise.all([catalog.reload(), options.load()]);
      },
      async stop() {
        clearInterval(sync);
        // Streams still running when the listener stopped are cut here and settled for what they delivered,
        // before the outbox's last report.
        await core.endStreams();
        accounts.stop();
        await scheduler.stop();
        await outbox.stop();
        reporter?.close();
        await options.close();
        await pubsub?.close();
        await orm.close(true);
      },
    };
  } catch (err) {
    await pubsub?.close().catch(() => {});
    await orm.close(true);
    throw err;
  }
}

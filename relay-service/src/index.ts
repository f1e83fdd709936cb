/**
 * The relay process in one call: store, HTTP fronts and the gRPC server. main.ts runs it from the environment;
 * tests and the launcher can run it in-process.
 */
import process from 'node:process';
import { parseRelayConfig, type RelayConfig, type RelayConfigInput } from './config.ts';
import { createRelayPipeline, type RelayPipeline } from './core/pipeline.ts';
import { createRuntimeInfo, type RuntimeInfo } from './core/runtime-info.ts';
import type { BillingReporter } from './grpc/billing-client.ts';
import { grpcSecurityFrom } from './grpc/security.ts';
import { startRelayGrpc } from './grpc/server.ts';
import { createHttpApp } from './http/app.ts';
import { createClaudeFront } from './http/claude.ts';
import { createClientIpResolver } from './http/client-ip.ts';
import { createGeminiFront } from './http/gemini.ts';
import { createMidjourneyFront } from './http/midjourney.ts';
import { createOpenAiFront } from './http/openai.ts';
import { createSunoFront } from './http/suno.ts';
import { createLogger, type Logger } from './log.ts';
import { createRealtimeGateway, type RealtimeGateway } from './realtime/gateway.ts';
import { releaseStartupMemory, serveHttp } from './runtime.ts';
import { createStore, type RelayStore } from './store/index.ts';

export type { RelayConfig, RelayConfigInput } from './config.ts';
export type { RuntimeInfo } from './core/runtime-info.ts';

export type RunningRelay = {
  /** e.g. `http://127.0.0.1:3001` */
  httpUrl: string;
  /** `host:port` of the gRPC server */
  grpcAddress: string;
  info: RuntimeInfo;
  store: RelayStore;
  /** null without DATABASE_URL (the model API then answers 503). */
  pipeline: RelayPipeline | null;
  /** Health NOT_SERVING and /readyz 503, stop accepting, drain HTTP and gRPC, close the store. Idempotent. */
  stop(): Promise<void>;
};

export type StartRelayOptions = {
  log?: Logger;
  /** Redis key prefix (tests use one per worker). */
  keyPrefix?: string;
  /** How long start waits for Redis before starting not-ready (default 5 s). */
  storeWaitMs?: number;
  /** Upstream fetch override (tests). */
  fetch?: typeof fetch;
  /** Billing reporter override (tests); default: gRPC to BILLING_GRPC_URL. */
  reporter?: BillingReporter | null;
  /**
   * Give back the heap start-up grew but no longer uses (runtime.ts releaseStartupMemory) before returning.
   * Default: when NODE_ENV is production (the image, k8s, the bench); tests skip the extra full collection.
   */
  releaseStartupMemory?: boolean;
};

export async function startRelay(
  config: RelayConfig | RelayConfigInput,
  opts: StartRelayOptions = {},
): Promise<RunningRelay> {
  const cfg = parseRelayConfig(config);
  const log = opts.log ?? createLogger(cfg.LOG_LEVEL);
  // Read before anything starts: an unreadable TLS file stops the start with its variable named.
  const security = grpcSecurityFrom(cfg);
  const store = await createStore({
    redisUrl: cfg.REDIS_URL,
    log,
    ...(opts.keyPrefix ? { keyPrefix: opts.keyPrefix } : {}),
    ...(opts.storeWaitMs !== undefined ? { waitMs: opts.storeWaitMs } : {}),
  });
  const info = createRuntimeInfo({ storeMode: store.mode, instanceId: cfg.RELAY_INSTANCE_ID });

  let draining = false;
  let grpc: Awaited<ReturnType<typeof startRelayGrpc>> | undefined;
  let http: Awaited<ReturnType<typeof serveHttp>> | undefined;
  let pipeline: RelayPipeline | null = null;
  let realtime: RealtimeGateway | null = null;
  try {
    if (cfg.DATABASE_URL) {
      pipeline = await createRelayPipeline({
        cfg,
        store,
        log,
        instanceId: info.instanceId,
        ...(opts.fetch ? { fetch: opts.fetch } : {}),
        ...(opts.reporter !== undefined ? { reporter: opts.reporter } : {}),
        security,
      });
    } else {
      log.warn('DATABASE_URL is not set: the model API answers 503 until the relay has a database');
    }
    const clientIp = createClientIpResolver({ trustProxy: cfg.TRUST_PROXY, secret: cfg.INTERNAL_API_SECRET });
    const fronts = pipeline
      ? [
          // Claude first: it owns /v1/messages and answers GET /v1/models for Claude clients.
          createClaudeFront({ ...pipeline, clientIp }),
          // Gemini owns /v1beta and POST /v1/models/{model}:{method}.
          createGeminiFront({ ...pipeline, clientIp }),
          // Midjourney owns /mj/... and the mode prefixes /mj-fast/mj/... (before OpenAI, the fallback).
          createMidjourneyFront({ ...pipeline, clientIp }),
          // Suno owns /suno/... (new-api's channel type 36).
          createSunoFront({ ...pipeline, clientIp }),
          createOpenAiFront({ ...pipeline, clientIp }),
        ]
      : undefined;
    const app = createHttpApp({
      store,
      log,
      isDraining: () => draining,
      maxBodyBytes: cfg.RELAY_MAX_BODY_BYTES,
      ...(fronts ? { fronts } : {}),
    });
    // Before the listeners open, so the collection (~0.1-0.2 s) cannot hold up a request.
    if (opts.releaseStartupMemory ?? process.env.NODE_ENV === 'production') await releaseStartupMemory();
    // OpenAI Realtime over WebSocket (GET /v1/realtime upgrades; ADR 030).
    realtime = pipeline
      ? createRealtimeGateway({
          ...pipeline,
          clientIp,
          log,
          idleMs: cfg.RELAY_UPSTREAM_TIMEOUT_MS,
          limits: {
            highWater: Math.min(cfg.RELAY_STREAM_BUFFER_BYTES, cfg.RELAY_STREAM_BUFFER_MAX_BYTES),
            max: cfg.RELAY_STREAM_BUFFER_MAX_BYTES,
            stallMs: cfg.RELAY_STREAM_STALL_MS,
          },
        })
      : null;
    http = await serveHttp(app.fetch, {
      port: cfg.RELAY_PORT,
      hostname: cfg.RELAY_HOST,
      ...(realtime ? { upgrade: realtime.upgrade, wsMaxPayload: cfg.RELAY_STREAM_BUFFER_MAX_BYTES } : {}),
    });
    grpc = await startRelayGrpc({
      host: cfg.RELAY_GRPC_HOST,
      port: cfg.RELAY_GRPC_PORT,
      deps: { log, runtimeInfo: () => info, pipeline },
      security,
    });
  } catch (err) {
    await http?.close(0);
    await pipeline?.stop().catch(() => {});
    await store.close();
    throw err;
  }

  const httpHost = http.hostname.includes(':') ? `[${http.hostname}]` : http.hostname;
  const running = { http, grpc, realtime };
  let stopping: Promise<void> | undefined;
  return {
    httpUrl: `http://${httpHost}:${http.port}`,
    grpcAddress: grpc.address,
    info,
    store,
    pipeline,
    stop() {
      stopping ??= (async () => {
        draining = true;
        running.grpc.health.setAllNotServing();
        await Promise.all([
          // Upgraded sockets are no longer the HTTP server's: end the sessions (each billed) alongside.
          running.realtime?.close(),
          running.http.close(cfg.RELAY_DRAIN_TIMEOUT_MS),
          running.grpc.stop(cfg.RELAY_DRAIN_TIMEOUT_MS),
        ]);
        await pipeline?.stop().catch((e) => log.error('pipeline stop failed', e));
        await store.close();
      })();
      return stopping;
    },
  };
}

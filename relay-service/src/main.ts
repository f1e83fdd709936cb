/**
 * Relay process entry point: `node relay-service/src/main.ts` or `deno run -A relay-service/src/main.ts`.
 * Configuration comes from the environment (config.ts). SIGINT/SIGTERM: health NOT_SERVING, stop accepting,
 * drain in-flight requests, exit 0.
 */
import { ConfigError, loadRelayConfig } from './config.ts';
import { startRelay } from './index.ts';
import { createLogger } from './log.ts';
import { exit, onShutdownSignal, runtime } from './runtime.ts';

let config: ReturnType<typeof loadRelayConfig>;
try {
  config = loadRelayConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(`[relay] ${err.message}`);
  exit(2);
}

const log = createLogger(config.LOG_LEVEL);
try {
  const relay = await startRelay(config, { log });
  log.info(
    `${relay.info.version} on ${runtime.name} ${runtime.version} (instance ${relay.info.instanceId}, ${relay.store.mode} store)`,
  );
  log.info(`HTTP on ${relay.httpUrl}, gRPC on ${relay.grpcAddress}`);
  onShutdownSignal((signal) => {
    log.info(`${signal}: draining (up to ${config.RELAY_DRAIN_TIMEOUT_MS} ms)`);
    relay.stop().then(
      () => {
        log.info('stopped');
        exit(0);
      },
      (err: unknown) => {
        log.error('stop failed', err);
        exit(1);
      },
    );
  });
} catch (err) {
  log.error('failed to start', err);
  exit(1);
}

/**
 * The Switchyard relay under test (child process), started like relay-service/src/main.ts does but with a
 * bench-only Redis key prefix (removed by the runner afterwards). Config comes from the environment.
 * IPC: sends {ready, url, grpcAddress, store, startRelayMs, readyAtMs} (readyAtMs: since the process started, so
 * Node's own boot and module loading count; startRelayMs: startRelay alone, i.e. store, schema check, options,
 * routing table); {op:'stop'} drains and exits.
 */
import { startRelay } from '@switchyard/relay';
import { loadRelayConfig } from '@switchyard/relay/config.ts';
import { createLogger } from '@switchyard/relay/log.ts';

const t0 = performance.now();
const relay = await startRelay(loadRelayConfig(), {
  log: createLogger('warn'),
  keyPrefix: process.env.BENCH_REDIS_PREFIX ?? 'sy_bench:',
});
process.send?.({
  ready: true,
  url: relay.httpUrl,
  grpcAddress: relay.grpcAddress,
  store: relay.store.mode,
  startRelayMs: performance.now() - t0,
  readyAtMs: performance.now(),
});

const stop = () =>
  relay.stop().finally(() => {
    process.send?.({ stopped: true });
    process.exit(0);
  });
process.on('message', (msg: { op: string }) => {
  if (msg.op === 'stop') void stop();
});
process.on('disconnect', () => void stop());

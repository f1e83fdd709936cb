/**
 * Relay smoke test under Deno (`npm run test:deno`): the relay runs on Deno both as a process (main.ts, as
 * deployed) and in-process (startRelay), and answers HTTP health, gRPC health and GetRuntimeInfo.
 */
import { credentials, Metadata, type ServiceError, status } from '@grpc/grpc-js';
import {
  type GetRuntimeInfoResponse,
  RelayServiceClient,
  Runtime,
  StoreMode,
} from '@switchyard/proto/switchyard/relay/v1/relay.ts';
import { checkHealth } from '../../src/grpc/health.ts';
import { clientSecurity } from '../../src/grpc/security.ts';
import { startRelay } from '../../src/index.ts';
import { silentLogger } from '../../src/log.ts';

// Minimal Deno typings: this file is run by Deno but type-checked by nothing (--no-check).
declare const Deno: {
  test(def: {
    name: string;
    sanitizeOps?: boolean;
    sanitizeResources?: boolean;
    fn: () => Promise<void>;
  }): void;
  execPath(): string;
  version: { deno: string };
  Command: new (
    cmd: string,
    opts: { args: string[]; env: Record<string, string>; stdout: 'piped'; stderr: 'inherit' },
  ) => {
    spawn(): {
      stdout: ReadableStream<Uint8Array>;
      kill(signal: string): void;
      status: Promise<{ code: number; success: boolean }>;
    };
  };
};

const mainTs = new URL('../../src/main.ts', import.meta.url).pathname;
const SECRET = 'deno-smoke-internal-secret-0123456789abcdef';

function assert(cond: unknown, message: string): asserts cond {
  if (!cond) throw new Error(message);
}

function getRuntimeInfo(address: string, secret: string | null = SECRET): Promise<GetRuntimeInfoResponse> {
  const security = clientSecurity({ secret: SECRET, tls: null });
  const client = secret
    ? new RelayServiceClient(address, security.credentials, security.options)
    : new RelayServiceClient(address, credentials.createInsecure());
  return new Promise<GetRuntimeInfoResponse>((resolve, reject) => {
    client.getRuntimeInfo({}, new Metadata(), { deadline: Date.now() + 3_000 }, (err, res) =>
      err ? reject(err) : resolve(res),
    );
  }).finally(() => client.close());
}

async function checkRelay(httpUrl: string, grpcAddress: string) {
  const health = await fetch(`${httpUrl}/healthz`);
  assert(health.status === 200, `/healthz answered ${health.status}`);
  const body = (await health.json()) as { status: string };
  assert(body.status === 'ok', `/healthz body ${JSON.stringify(body)}`);

  const notFound = await fetch(`${httpUrl}/x`);
  const error = (await notFound.json()) as { error: { message: string; type: string } };
  assert(notFound.status === 404 && error.error.message === 'Invalid URL (GET /x)', 'OpenAI-shaped 404');

  const grpcHealth = await checkHealth(grpcAddress, { timeoutMs: 3_000 });
  assert(grpcHealth === 'SERVING', `gRPC health ${grpcHealth}`);

  const refused = (await getRuntimeInfo(grpcAddress, null).catch((e) => e)) as ServiceError;
  assert(refused.code === status.UNAUTHENTICATED, `a call without the service secret: ${refused.code}`);

  const info = await getRuntimeInfo(grpcAddress);
  assert(info.runtime === Runtime.RUNTIME_DENO, `runtime ${info.runtime}, expected RUNTIME_DENO`);
  assert(info.runtimeVersion === Deno.version.deno, `runtime version ${info.runtimeVersion}`);
  assert(info.storeMode === StoreMode.STORE_MODE_MEMORY, `store mode ${info.storeMode}`);
  assert(/^v\d+\.\d+\.\d+/.test(info.version), `version ${info.version}`);
}

Deno.test({
  name: 'relay main.ts runs on Deno, answers health and GetRuntimeInfo, exits 0 on SIGTERM',
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const child = new Deno.Command(Deno.execPath(), {
      args: ['run', '-A', '--no-check', mainTs],
      env: {
        RELAY_PORT: '0',
        RELAY_GRPC_PORT: '0',
        REDIS_URL: '',
        LOG_LEVEL: 'info',
        INTERNAL_API_SECRET: SECRET,
      },
      stdout: 'piped',
      stderr: 'inherit',
    }).spawn();
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let out = '';
    let addresses: RegExpMatchArray | null = null;
    const deadline = Date.now() + 20_000;
    try {
      while (!addresses) {
        assert(Date.now() < deadline, `relay did not report its addresses:\n${out}`);
        const { value, done } = await reader.read();
        assert(!done, `relay exited before listening:\n${out}`);
        out += value;
        addresses = out.match(/HTTP on (http:\/\/\S+), gRPC on (\S+)/);
      }
      await checkRelay(addresses[1]!, addresses[2]!);
    } catch (err) {
      child.kill('SIGKILL');
      throw err;
    }
    child.kill('SIGTERM');
    // Keep reading so the child never blocks on a full pipe.
    void (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        out += value;
      }
    })();
    const { code } = await child.status;
    assert(code === 0, `relay exited with ${code} after SIGTERM:\n${out}`);
    assert(out.includes('stopped'), `no clean stop in the output:\n${out}`);
  },
});

Deno.test({
  name: 'startRelay runs in-process on Deno (Deno.serve) and stops cleanly',
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const relay = await startRelay(
      { RELAY_PORT: 0, RELAY_GRPC_PORT: 0, RELAY_DRAIN_TIMEOUT_MS: 2_000, INTERNAL_API_SECRET: SECRET },
      { log: silentLogger },
    );
    try {
      await checkRelay(relay.httpUrl, relay.grpcAddress);
    } finally {
      await relay.stop();
    }
    const after = await fetch(`${relay.httpUrl}/healthz`).then(
      () => 'answered',
      () => 'refused',
    );
    assert(after === 'refused', 'HTTP still answered after stop');
  },
});

/**
 * The standard gRPC health service (grpc.health.v1.Health: Check and Watch), shared by the relay and the
 * console. Kubernetes probes call Check with service "" (the whole server).
 */
import {
  type ChannelCredentials,
  credentials,
  Metadata,
  type Server,
  type ServerUnaryCall,
  type ServerWritableStream,
  type sendUnaryData,
  status,
} from '@grpc/grpc-js';
import {
  HealthCheckRequest,
  type HealthCheckResponse,
  HealthCheckResponse_ServingStatus,
  HealthClient,
  type HealthServer,
  HealthService,
} from '@switchyard/proto/grpc/health/v1/health.ts';

export type ServingStatus = 'SERVING' | 'NOT_SERVING';
/** What a Check can answer: a served status, or UNKNOWN when the server has not decided yet. */
export type CheckedStatus = ServingStatus | 'UNKNOWN';

const wire: Record<ServingStatus, HealthCheckResponse_ServingStatus> = {
  SERVING: HealthCheckResponse_ServingStatus.SERVING,
  NOT_SERVING: HealthCheckResponse_ServingStatus.NOT_SERVING,
};

type Watch = ServerWritableStream<HealthCheckRequest, HealthCheckResponse>;

export class Health {
  readonly #statuses = new Map<string, ServingStatus>();
  readonly #watches = new Map<string, Set<Watch>>();

  /** `statuses` maps service names ("" = the whole server) to their initial status. */
  constructor(statuses: Record<string, ServingStatus>) {
    for (const [service, s] of Object.entries(statuses)) this.#statuses.set(service, s);
  }

  status(service: string): ServingStatus | undefined {
    return this.#statuses.get(service);
  }

  setStatus(service: string, s: ServingStatus): void {
    if (this.#statuses.get(service) === s) return;
    this.#statuses.set(service, s);
    for (const call of this.#watches.get(service) ?? []) call.write({ status: wire[s] });
  }

  /** Shutdown: every service reports NOT_SERVING, so probes and balancers stop sending calls. */
  setAllNotServing(): void {
    for (const service of this.#statuses.keys()) this.setStatus(service, 'NOT_SERVING');
  }

  /** Ends open Watch streams (a graceful server shutdown waits for them otherwise). */
  endWatches(): void {
    for (const calls of this.#watches.values()) for (const call of calls) call.end();
    this.#watches.clear();
  }

  addTo(server: Server): void {
    const impl: HealthServer = {
      check: (
        call: ServerUnaryCall<HealthCheckRequest, HealthCheckResponse>,
        cb: sendUnaryData<HealthCheckResponse>,
      ) => {
        const s = this.#statuses.get(call.request.service);
        if (!s) return cb({ code: status.NOT_FOUND, details: `unknown service "${call.request.service}"` });
        cb(null, { status: wire[s] });
      },
      watch: (call: Watch) => {
        const service = call.request.service;
        const s = this.#statuses.get(service);
        call.write({ status: s ? wire[s] : HealthCheckResponse_ServingStatus.SERVICE_UNKNOWN });
        const set = this.#watches.get(service) ?? new Set<Watch>();
        this.#watches.set(service, set);
        set.add(call);
        call.on('cancelled', () => set.delete(call));
      },
    };
    server.addService(HealthService, impl);
  }
}

const fromWire: Partial<Record<HealthCheckResponse_ServingStatus, CheckedStatus>> = {
  [HealthCheckResponse_ServingStatus.SERVING]: 'SERVING',
  [HealthCheckResponse_ServingStatus.NOT_SERVING]: 'NOT_SERVING',
};

export type HealthChecker = {
  /** One Check with a deadline; rejects with the gRPC error (UNAVAILABLE, NOT_FOUND for an unknown service...). */
  check(opts?: { service?: string; timeoutMs?: number }): Promise<CheckedStatus>;
  close(): void;
};

/**
 * A long-lived health client for `address` (`host:port`); connects lazily. Health needs no service secret;
 * against a mutual-TLS server pass TLS credentials (security.ts channelCredentials).
 */
export function createHealthChecker(
  address: string,
  creds: ChannelCredentials = credentials.createInsecure(),
): HealthChecker {
  const client = new HealthClient(address, creds);
  return {
    check(opts = {}) {
      return new Promise<CheckedStatus>((resolve, reject) => {
        client.check(
          HealthCheckRequest.fromPartial({ service: opts.service ?? '' }),
          new Metadata(),
          { deadline: Date.now() + (opts.timeoutMs ?? 2_000) },
          (err, res) => (err ? reject(err) : resolve(fromWire[res.status] ?? 'UNKNOWN')),
        );
      });
    },
    close: () => client.close(),
  };
}

/** One-shot Check of `address` (tests, probes). */
export async function checkHealth(
  address: string,
  opts: { service?: string; timeoutMs?: number; credentials?: ChannelCredentials } = {},
): Promise<CheckedStatus> {
  const checker = createHealthChecker(address, opts.credentials);
  try {
    return await checker.check(opts);
  } finally {
    checker.close();
  }
}

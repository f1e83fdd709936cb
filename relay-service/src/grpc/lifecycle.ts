/**
 * Binding and stopping a grpc-js server, shared by the relay and the console (app/grpc).
 */
import {
  Server,
  ServerCredentials,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { Health, type ServingStatus } from './health.ts';
import { type GrpcSecurity, serverCredentials, serviceAuthInterceptor } from './security.ts';

/** `host:port` for grpc-js (IPv6 hosts in brackets). */
export function grpcAddress(host: string, port: number): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Binds and resolves with the bound port (useful with port 0); plaintext unless credentials say otherwise. */
export function bindServer(
  server: Server,
  host: string,
  port: number,
  creds: ServerCredentials = ServerCredentials.createInsecure(),
): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(grpcAddress(host, port), creds, (err, bound) => (err ? reject(err) : resolve(bound)));
  });
}

/** Stops accepting calls, lets in-flight calls finish for up to `drainMs`, then cancels what is left. */
export async function shutdownGracefully(server: Server, drainMs: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, drainMs);
    server.tryShutdown(() => resolve());
  });
  clearTimeout(timer);
}

export type GrpcServiceRegistration = {
  /** Fully qualified name reported by the health service, e.g. `switchyard.relay.v1.RelayService`. */
  name: string;
  definition: ServiceDefinition;
  implementation: UntypedServiceImplementation;
};

export type RunningGrpcServer = {
  /** `host:port` to dial. */
  address: string;
  port: number;
  health: Health;
  /** Health NOT_SERVING, stop accepting, drain in-flight calls up to `drainMs`, then cancel the rest. Idempotent. */
  stop(drainMs?: number): Promise<void>;
};

/**
 * Starts a grpc-js server with the standard health service (the whole server and each named service SERVING)
 * and the given services; the one way both processes run gRPC. Every call but health's must carry the service
 * secret (security.ts: one interceptor for every method of every service); with TLS files the server speaks
 * mutual TLS.
 */
export async function startGrpcServer(opts: {
  host: string;
  port: number;
  services: readonly GrpcServiceRegistration[];
  security: GrpcSecurity;
}): Promise<RunningGrpcServer> {
  const server = new Server({ interceptors: [serviceAuthInterceptor(opts.security.secret)] });
  const statuses: Record<string, ServingStatus> = { '': 'SERVING' };
  for (const s of opts.services) statuses[s.name] = 'SERVING';
  const health = new Health(statuses);
  health.addTo(server);
  for (const s of opts.services) server.addService(s.definition, s.implementation);
  const port = await bindServer(server, opts.host, opts.port, serverCredentials(opts.security.tls));
  let stopping: Promise<void> | undefined;
  return {
    address: grpcAddress(opts.host, port),
    port,
    health,
    stop(drainMs = 10_000) {
      stopping ??= (async () => {
        health.setAllNotServing();
        health.endWatches();
        await shutdownGracefully(server, drainMs);
      })();
      return stopping;
    },
  };
}

/**
 * Binding and stopping a grpc-js server, shared by the relay and the console (app/grpc).
 */
import { type Server, ServerCredentials } from '@grpc/grpc-js';

/** `host:port` for grpc-js (IPv6 hosts in brackets). */
export function grpcAddress(host: string, port: number): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Binds insecure (in-cluster, plaintext) and resolves with the bound port (useful with port 0). */
export function bindInsecure(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(grpcAddress(host, port), ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    );
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

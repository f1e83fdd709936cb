/**
 * The standard gRPC health service for the console's gRPC server. One implementation serves both processes:
 * it lives in the relay package (relay-service/src/grpc/health.ts) and is re-exported here.
 */
import type { Server } from '@grpc/grpc-js';
import { Health, type ServingStatus } from '@switchyard/relay/grpc/health.ts';

export type { CheckedStatus, HealthChecker, ServingStatus } from '@switchyard/relay/grpc/health.ts';
export { checkHealth, createHealthChecker, Health } from '@switchyard/relay/grpc/health.ts';

/** Adds health to `server` with every service in `services` (plus "", the whole server) SERVING. */
export function addHealthService(server: Server, services: readonly string[]): Health {
  const statuses: Record<string, ServingStatus> = { '': 'SERVING' };
  for (const name of services) statuses[name] = 'SERVING';
  const health = new Health(statuses);
  health.addTo(server);
  return health;
}

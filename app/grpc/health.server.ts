/**
 * The standard gRPC health service for the console's gRPC server. One implementation serves both processes:
 * it lives in the relay package (relay-service/src/grpc/health.ts) and is re-exported here.
 */

export type { CheckedStatus, HealthChecker, ServingStatus } from '@switchyard/relay/grpc/health.ts';
export { checkHealth, createHealthChecker, Health } from '@switchyard/relay/grpc/health.ts';

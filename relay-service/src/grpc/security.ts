/**
 * Who may call the internal gRPC services (ADR 034), for both processes: the console's Billing service and the
 * relay's Relay service. Every call carries the shared service secret (INTERNAL_API_SECRET) as
 * `authorization: Bearer <secret>`; one server interceptor checks it before any handler runs, so no method can
 * forget it, and one client interceptor adds it to every call. The standard health service stays open (the
 * Kubernetes gRPC probe sends no metadata; it reveals only SERVING / NOT_SERVING). With GRPC_TLS_CA/CERT/KEY
 * both sides also speak mutual TLS: the server asks for and verifies a client certificate, the client verifies
 * the server's.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  type ChannelCredentials,
  type ClientOptions,
  credentials,
  InterceptingCall,
  type Interceptor,
  type Metadata,
  ResponderBuilder,
  ServerCredentials,
  ServerInterceptingCall,
  type ServerInterceptor,
  ServerListenerBuilder,
  status,
} from '@grpc/grpc-js';
import { z } from 'zod';

/** Shortest accepted INTERNAL_API_SECRET (characters). */
export const MIN_SERVICE_SECRET_LENGTH = 32;

const HEALTH_PREFIX = '/grpc.health.v1.Health/';

export const SERVICE_SECRET_HELP = `at least ${MIN_SERVICE_SECRET_LENGTH} characters, the same value for console and relay (npm start generates one; e.g. \`openssl rand -hex 32\`)`;

/**
 * The service credentials both processes read (config.ts of each): the shared secret, required in every mode,
 * and the optional mutual-TLS files.
 */
export const grpcSecurityEnv = {
  INTERNAL_API_SECRET: z
    .string({ error: `INTERNAL_API_SECRET is required: ${SERVICE_SECRET_HELP}` })
    .min(MIN_SERVICE_SECRET_LENGTH, `INTERNAL_API_SECRET is too short: ${SERVICE_SECRET_HELP}`),
  /** PEM file of the CA that signs the console's and the relay's certificates (mutual TLS; all three or none). */
  GRPC_TLS_CA: z.string().optional(),
  /** PEM certificate this process presents, as gRPC server and as gRPC client. */
  GRPC_TLS_CERT: z.string().optional(),
  /** PEM private key of GRPC_TLS_CERT. */
  GRPC_TLS_KEY: z.string().optional(),
};

/** Refinement for a config object holding grpcSecurityEnv: the three TLS files come together or not at all. */
export function tlsFilesProblem(cfg: {
  GRPC_TLS_CA?: string | undefined;
  GRPC_TLS_CERT?: string | undefined;
  GRPC_TLS_KEY?: string | undefined;
}): string | null {
  const set = [cfg.GRPC_TLS_CA, cfg.GRPC_TLS_CERT, cfg.GRPC_TLS_KEY].filter(Boolean).length;
  return set === 0 || set === 3
    ? null
    : 'GRPC_TLS_CA, GRPC_TLS_CERT and GRPC_TLS_KEY are set together (mutual TLS) or not at all';
}

export type GrpcTls = { ca: Buffer; cert: Buffer; key: Buffer };

/** What a gRPC server or client of either process needs to authenticate its calls. */
export type GrpcSecurity = { secret: string; tls: GrpcTls | null };

/** Reads the TLS files named by the configuration (null when mutual TLS is not configured). */
export function readGrpcTls(cfg: {
  GRPC_TLS_CA?: string | undefined;
  GRPC_TLS_CERT?: string | undefined;
  GRPC_TLS_KEY?: string | undefined;
}): GrpcTls | null {
  if (!cfg.GRPC_TLS_CA || !cfg.GRPC_TLS_CERT || !cfg.GRPC_TLS_KEY) return null;
  const read = (name: string, file: string) => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new Error(`${name}: cannot read ${file} (${(err as Error).message})`);
    }
  };
  return {
    ca: read('GRPC_TLS_CA', cfg.GRPC_TLS_CA),
    cert: read('GRPC_TLS_CERT', cfg.GRPC_TLS_CERT),
    key: read('GRPC_TLS_KEY', cfg.GRPC_TLS_KEY),
  };
}

export function grpcSecurityFrom(cfg: {
  INTERNAL_API_SECRET: string;
  GRPC_TLS_CA?: string | undefined;
  GRPC_TLS_CERT?: string | undefined;
  GRPC_TLS_KEY?: string | undefined;
}): GrpcSecurity {
  return { secret: cfg.INTERNAL_API_SECRET, tls: readGrpcTls(cfg) };
}

/** Server credentials: mutual TLS (client certificate required and verified) when configured, else plaintext. */
export function serverCredentials(tls: GrpcTls | null): ServerCredentials {
  return tls
    ? ServerCredentials.createSsl(tls.ca, [{ cert_chain: tls.cert, private_key: tls.key }], true)
    : ServerCredentials.createInsecure();
}

/** Channel credentials for a client of the other process (or a health check). */
export function channelCredentials(tls: GrpcTls | null): ChannelCredentials {
  return tls ? credentials.createSsl(tls.ca, tls.key, tls.cert) : credentials.createInsecure();
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Compares in constant time: equal-length SHA-256 digests, whatever the lengths of the inputs. */
function sameSecret(expected: Buffer, received: string): boolean {
  return timingSafeEqual(expected, digest(received));
}

function assertSecret(secret: string): void {
  if (secret.length < MIN_SERVICE_SECRET_LENGTH)
    throw new Error(`the internal gRPC service secret must be ${SERVICE_SECRET_HELP}`);
}

/** Why a call's metadata is refused, or null when it carries the service secret. */
export function serviceCredentialsProblem(expected: Buffer, metadata: Metadata): string | null {
  const values = metadata.get('authorization');
  if (values.length === 0)
    return 'this internal gRPC service needs the service credentials (authorization: Bearer <INTERNAL_API_SECRET>)';
  const value = values.length === 1 && typeof values[0] === 'string' ? values[0] : '';
  if (!value.startsWith('Bearer ') || !sameSecret(expected, value.slice(7)))
    return 'the service credentials do not match this server (INTERNAL_API_SECRET differs)';
  return null;
}

/**
 * The server interceptor: every call but the health service's must carry the secret, else it ends with
 * UNAUTHENTICATED before its handler sees metadata or a message (nothing is charged, written or streamed).
 */
export function serviceAuthInterceptor(secret: string): ServerInterceptor {
  assertSecret(secret);
  const expected = digest(secret);
  return (method, call) => {
    if (method.path.startsWith(HEALTH_PREFIX)) return new ServerInterceptingCall(call);
    let refused = false;
    const listener = new ServerListenerBuilder()
      .withOnReceiveMetadata((metadata, next) => {
        const problem = serviceCredentialsProblem(expected, metadata);
        if (!problem) return next(metadata);
        refused = true;
        call.sendStatus({ code: status.UNAUTHENTICATED, details: problem });
      })
      .withOnReceiveMessage((message, next) => {
        if (!refused) next(message);
      })
      .withOnReceiveHalfClose((next) => {
        if (!refused) next();
      })
      .build();
    return new ServerInterceptingCall(
      call,
      new ResponderBuilder().withStart((next) => next(listener)).build(),
    );
  };
}

/** The client interceptor: adds the secret to every call of the client it is given to. */
export function serviceCredentialsInterceptor(secret: string): Interceptor {
  assertSecret(secret);
  const value = `Bearer ${secret}`;
  return (options, nextCall) =>
    new InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        metadata.set('authorization', value);
        next(metadata, listener);
      },
    });
}

/** Credentials and options for a client of the other process's service. */
export function clientSecurity(security: GrpcSecurity): {
  credentials: ChannelCredentials;
  options: Partial<ClientOptions>;
} {
  return {
    credentials: channelCredentials(security.tls),
    options: { interceptors: [serviceCredentialsInterceptor(security.secret)] },
  };
}

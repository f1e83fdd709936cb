import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadRelayConfig } from './config.ts';

const S = 'relay-config-internal-secret-0123456789';

describe('relay config', () => {
  it('applies the documented defaults', () => {
    const cfg = loadRelayConfig({ INTERNAL_API_SECRET: S });
    expect(cfg).toMatchObject({
      RELAY_HOST: '127.0.0.1',
      RELAY_PORT: 3001,
      RELAY_GRPC_HOST: '127.0.0.1',
      RELAY_GRPC_PORT: 50052,
      LOG_LEVEL: 'info',
      RELAY_ACCOUNT_TTL_MS: 10_000,
      RELAY_BALANCE_TTL_MS: 600_000,
    });
    expect(cfg.REDIS_URL).toBeUndefined();
    expect(cfg.DATABASE_URL).toBeUndefined();
  });

  it('treats an empty REDIS_URL as unset and keeps a valid one', () => {
    expect(loadRelayConfig({ INTERNAL_API_SECRET: S, REDIS_URL: '' }).REDIS_URL).toBeUndefined();
    expect(loadRelayConfig({ INTERNAL_API_SECRET: S, REDIS_URL: 'redis://r:6379/0' }).REDIS_URL).toBe(
      'redis://r:6379/0',
    );
  });

  it('names every bad variable in one error', () => {
    let error: unknown;
    try {
      loadRelayConfig({
        RELAY_PORT: 'abc',
        RELAY_GRPC_PORT: '70000',
        REDIS_URL: 'http://x',
        LOG_LEVEL: 'loud',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const name of ['RELAY_PORT', 'RELAY_GRPC_PORT', 'REDIS_URL', 'LOG_LEVEL', 'INTERNAL_API_SECRET'])
      expect(message).toContain(name);
  });

  it('takes SECRETS_KEY as 32 bytes in hex or base64 and refuses anything else, naming the variable', () => {
    const b64 = Buffer.alloc(32, 3).toString('base64');
    expect(
      loadRelayConfig({ INTERNAL_API_SECRET: S, SECRETS_KEY: b64, SECRETS_KEY_PREVIOUS: 'cd'.repeat(32) })
        .SECRETS_KEY,
    ).toBe(b64);
    expect(() => loadRelayConfig({ INTERNAL_API_SECRET: S, SECRETS_KEY: 'x'.repeat(40) })).toThrow(
      /SECRETS_KEY must be 32 random bytes/,
    );
  });

  it('refuses to start without the gRPC service secret, naming the variable', () => {
    expect(() => loadRelayConfig({})).toThrow(/INTERNAL_API_SECRET is required: at least 32 characters/);
    expect(() => loadRelayConfig({ INTERNAL_API_SECRET: 'short' })).toThrow(
      /INTERNAL_API_SECRET is too short/,
    );
    expect(() => loadRelayConfig({ INTERNAL_API_SECRET: S, GRPC_TLS_KEY: '/key.pem' })).toThrow(
      /GRPC_TLS_CA, GRPC_TLS_CERT and GRPC_TLS_KEY are set together/,
    );
  });
});

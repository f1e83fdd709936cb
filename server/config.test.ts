import { describe, expect, it } from 'vitest';
import { ConfigError, loadConsoleConfig } from './config.ts';

const S = 'console-config-internal-secret-0123456789';

describe('loadConsoleConfig', () => {
  it('applies defaults and treats an empty REDIS_URL as unset', () => {
    const c = loadConsoleConfig({ DATABASE_URL: 'postgres://u@h/db', INTERNAL_API_SECRET: S, REDIS_URL: '' });
    expect(c).toMatchObject({
      PORT: 3000,
      HOST: '127.0.0.1',
      CONSOLE_GRPC_PORT: 50051,
      RELAY_URL: 'http://127.0.0.1:3001',
      RELAY_GRPC_URL: '127.0.0.1:50052',
      MIGRATE_ON_START: true,
      // Loopback unless told otherwise (the image and k8s set 0.0.0.0).
      CONSOLE_GRPC_HOST: '127.0.0.1',
    });
    expect(c.REDIS_URL).toBeUndefined();
    expect(c).toMatchObject({
      TRUST_PROXY: false,
      TURNSTILE_VERIFY_URL: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
      CRITICAL_RATE_LIMIT: 20,
      CRITICAL_RATE_LIMIT_DURATION: 1200,
      USAGE_LEDGER_RETENTION_DAYS: 30,
    });
    expect(
      loadConsoleConfig({
        DATABASE_URL: 'postgres://u@h/db',
        INTERNAL_API_SECRET: S,
        USAGE_LEDGER_RETENTION_DAYS: '0',
      }).USAGE_LEDGER_RETENTION_DAYS,
    ).toBe(0);
    expect(() =>
      loadConsoleConfig({
        DATABASE_URL: 'postgres://u@h/db',
        INTERNAL_API_SECRET: S,
        USAGE_LEDGER_RETENTION_DAYS: '-1',
      }),
    ).toThrow(/USAGE_LEDGER_RETENTION_DAYS/);
  });

  it('reads TRUSTED_ORIGINS as normalised origins and names a bad entry', () => {
    const base = { DATABASE_URL: 'postgres://u@h/db', INTERNAL_API_SECRET: S };
    expect(loadConsoleConfig(base).TRUSTED_ORIGINS).toEqual([]);
    expect(
      loadConsoleConfig({
        ...base,
        TRUSTED_ORIGINS: ' https://Console.Example.com/ , http://10.0.0.5:8080,,https://a.example:443',
      }).TRUSTED_ORIGINS,
    ).toEqual(['https://console.example.com', 'http://10.0.0.5:8080', 'https://a.example']);
    for (const bad of [
      'console.example.com',
      'https://a.example/path',
      'ftp://a.example',
      'https://u:p@a.example',
      'https://a.example?x=1',
      '*',
    ]) {
      expect(() => loadConsoleConfig({ ...base, TRUSTED_ORIGINS: bad })).toThrow(/TRUSTED_ORIGINS/);
    }
  });

  it('reads the auth settings', () => {
    const c = loadConsoleConfig({
      DATABASE_URL: 'postgres://u@h/db',
      INTERNAL_API_SECRET: S,
      TRUST_PROXY: 'true',
      TURNSTILE_VERIFY_URL: 'http://127.0.0.1:9/siteverify',
      CRITICAL_RATE_LIMIT: '0',
      CRITICAL_RATE_LIMIT_DURATION: '60',
    });
    expect(c).toMatchObject({
      TRUST_PROXY: true,
      TURNSTILE_VERIFY_URL: 'http://127.0.0.1:9/siteverify',
      CRITICAL_RATE_LIMIT: 0,
      CRITICAL_RATE_LIMIT_DURATION: 60,
    });
    expect(() =>
      loadConsoleConfig({ DATABASE_URL: 'postgres://u@h/db', INTERNAL_API_SECRET: S, TRUST_PROXY: 'yes' }),
    ).toThrow(/TRUST_PROXY/);
  });

  it('reads the login back-off per account (5 failures, 300 s cap by default; 0 turns it off)', () => {
    expect(loadConsoleConfig({ DATABASE_URL: 'postgres://u@h/db', INTERNAL_API_SECRET: S })).toMatchObject({
      LOGIN_BACKOFF_FAILURES: 5,
      LOGIN_BACKOFF_MAX: 300,
    });
    expect(
      loadConsoleConfig({
        DATABASE_URL: 'postgres://u@h/db',
        INTERNAL_API_SECRET: S,
        LOGIN_BACKOFF_FAILURES: '0',
        LOGIN_BACKOFF_MAX: '60',
      }),
    ).toMatchObject({ LOGIN_BACKOFF_FAILURES: 0, LOGIN_BACKOFF_MAX: 60 });
    expect(() =>
      loadConsoleConfig({
        DATABASE_URL: 'postgres://u@h/db',
        INTERNAL_API_SECRET: S,
        LOGIN_BACKOFF_MAX: '0',
      }),
    ).toThrow(/LOGIN_BACKOFF_MAX/);
  });

  it('names every bad variable in one error', () => {
    let error: unknown;
    try {
      loadConsoleConfig({ PORT: 'x', REDIS_URL: 'http://nope', MIGRATE_ON_START: 'maybe' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const key of ['PORT', 'DATABASE_URL', 'REDIS_URL', 'MIGRATE_ON_START', 'INTERNAL_API_SECRET'])
      expect(message).toContain(key);
  });

  it('takes SECRETS_KEY as 32 bytes in hex or base64 and refuses anything else, naming the variable', () => {
    const base = { DATABASE_URL: 'postgres://u@h/db', INTERNAL_API_SECRET: S };
    const hex = 'ab'.repeat(32);
    expect(loadConsoleConfig({ ...base, SECRETS_KEY: hex }).SECRETS_KEY).toBe(hex);
    expect(loadConsoleConfig({ ...base, SECRETS_KEY: '' }).SECRETS_KEY).toBeUndefined();
    expect(() =>
      loadConsoleConfig({ ...base, SECRETS_KEY: 'correct horse battery staple, long enough' }),
    ).toThrow(/SECRETS_KEY: SECRETS_KEY must be 32 random bytes/);
    expect(() =>
      loadConsoleConfig({ ...base, SECRETS_KEY: hex, SECRETS_KEY_PREVIOUS: `${hex},short` }),
    ).toThrow(/SECRETS_KEY_PREVIOUS/);
  });

  it('refuses to start without the gRPC service secret, in production as in development, naming the variable', () => {
    for (const NODE_ENV of [undefined, 'production', 'development']) {
      const env = { DATABASE_URL: 'postgres://u@h/db', ...(NODE_ENV ? { NODE_ENV } : {}) };
      expect(() => loadConsoleConfig(env)).toThrow(/INTERNAL_API_SECRET is required: at least 32 characters/);
      expect(() => loadConsoleConfig({ ...env, INTERNAL_API_SECRET: '' })).toThrow(
        /INTERNAL_API_SECRET is too short/,
      );
      expect(() => loadConsoleConfig({ ...env, INTERNAL_API_SECRET: 'x'.repeat(31) })).toThrow(
        /INTERNAL_API_SECRET is too short/,
      );
      expect(
        loadConsoleConfig({ ...env, INTERNAL_API_SECRET: 'x'.repeat(32) }).INTERNAL_API_SECRET,
      ).toHaveLength(32);
    }
  });

  it('takes the mutual-TLS files all together or not at all', () => {
    const base = { DATABASE_URL: 'postgres://u@h/db', INTERNAL_API_SECRET: S };
    expect(() => loadConsoleConfig({ ...base, GRPC_TLS_CA: '/ca.pem' })).toThrow(
      /GRPC_TLS_CA, GRPC_TLS_CERT and GRPC_TLS_KEY are set together/,
    );
    expect(
      loadConsoleConfig({ ...base, GRPC_TLS_CA: '/ca', GRPC_TLS_CERT: '/cert', GRPC_TLS_KEY: '/key' })
        .GRPC_TLS_KEY,
    ).toBe('/key');
  });
});

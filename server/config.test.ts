import { describe, expect, it } from 'vitest';
import { ConfigError, loadConsoleConfig } from './config.ts';

describe('loadConsoleConfig', () => {
  it('applies defaults and treats an empty REDIS_URL as unset', () => {
    const c = loadConsoleConfig({ DATABASE_URL: 'postgres://u@h/db', REDIS_URL: '' });
    expect(c).toMatchObject({
      PORT: 3000,
      HOST: '127.0.0.1',
      CONSOLE_GRPC_PORT: 50051,
      RELAY_URL: 'http://127.0.0.1:3001',
      RELAY_GRPC_URL: '127.0.0.1:50052',
      MIGRATE_ON_START: true,
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
      loadConsoleConfig({ DATABASE_URL: 'postgres://u@h/db', USAGE_LEDGER_RETENTION_DAYS: '0' })
        .USAGE_LEDGER_RETENTION_DAYS,
    ).toBe(0);
    expect(() =>
      loadConsoleConfig({ DATABASE_URL: 'postgres://u@h/db', USAGE_LEDGER_RETENTION_DAYS: '-1' }),
    ).toThrow(/USAGE_LEDGER_RETENTION_DAYS/);
  });

  it('reads the auth settings', () => {
    const c = loadConsoleConfig({
      DATABASE_URL: 'postgres://u@h/db',
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
    expect(() => loadConsoleConfig({ DATABASE_URL: 'postgres://u@h/db', TRUST_PROXY: 'yes' })).toThrow(
      /TRUST_PROXY/,
    );
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
    for (const key of ['PORT', 'DATABASE_URL', 'REDIS_URL', 'MIGRATE_ON_START'])
      expect(message).toContain(key);
  });

  it('takes SECRETS_KEY as 32 bytes in hex or base64 and refuses anything else, naming the variable', () => {
    const base = { DATABASE_URL: 'postgres://u@h/db' };
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
});

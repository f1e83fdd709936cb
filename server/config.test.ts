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
});

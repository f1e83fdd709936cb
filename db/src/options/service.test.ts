import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditEntry } from '../entities/audit-entry.ts';
import { Option } from '../entities/option.ts';
import { createMemoryPubSub, createPgPubSub, createRedisPubSub, type PubSub } from '../pubsub.ts';
import { createTestDatabase, type TestDatabase, testRedisUrl } from '../testing.ts';
import { OptionValidationError } from './registry.ts';
import { OptionService } from './service.ts';

async function eventually(check: () => void, timeoutMs = 1000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

describe('OptionService', () => {
  let db: TestDatabase;
  const channel = `switchyard:options:test:${process.pid}:${Date.now()}`;

  beforeAll(async () => {
    db = await createTestDatabase({ suffix: 'options' });
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('serves defaults, then stored values, typed and synchronously', async () => {
    const em = db.orm.em.fork();
    em.create(Option, { key: 'Price', value: '8' });
    em.create(Option, { key: 'UnknownLegacyKey', value: 'x' });
    em.create(Option, { key: 'RetryTimes', value: 'not-a-number' });
    await em.flush();
    const pubsub = createMemoryPubSub();
    const options = new OptionService({ orm: db.orm, pubsub, channel });
    expect(options.get('Price')).toBe(7.3);
    await options.load();
    expect(options.get('Price')).toBe(8);
    expect(options.get('RetryTimes')).toBe(0);
    expect(options.get('GroupRatio')).toEqual({ default: 1, vip: 1, svip: 1 });
    expect(options.get('RegisterEnabled')).toBe(true);
    await options.close();
    await pubsub.close();
  });

  it('validates, upserts, audits and hides secrets', async () => {
    const pubsub = createMemoryPubSub();
    const options = new OptionService({ orm: db.orm, pubsub, channel });
    await options.load();

    await expect(options.set('DataExportInterval', '0', 1)).rejects.toThrow(OptionValidationError);
    await expect(options.set('GroupRatio', '{oops', 1)).rejects.toThrow(/not a valid JSON string/);

    expect(await options.set('RegisterEnabled', 'false', 1, { ip: '10.0.0.1' })).toBe(false);
    expect(await options.set('RegisterEnabled', 'true', 1)).toBe(true);
    await options.set('GitHubClientSecret', 'gh-secret-value', 1);
    expect(options.get('GitHubClientSecret')).toBe('gh-secret-value');

    const visible = options.all();
    expect(visible.find((o) => o.key === 'GitHubClientSecret')?.value).toBe('');
    expect(visible.find((o) => o.key === 'RegisterEnabled')?.value).toBe('true');
    expect(JSON.stringify(visible)).not.toContain('gh-secret-value');
    expect(options.all({ includeSecrets: true }).find((o) => o.key === 'GitHubClientSecret')?.value).toBe(
      'gh-secret-value',
    );

    const em = db.orm.em.fork();
    expect((await em.findOneOrFail(Option, { key: 'RegisterEnabled' })).value).toBe('true');
    const audits = await em.find(AuditEntry, { targetType: 'option' }, { orderBy: { id: 'asc' } });
    expect(audits.map((a) => a.targetId)).toEqual([
      'RegisterEnabled',
      'RegisterEnabled',
      'GitHubClientSecret',
    ]);
    expect(audits[0]).toMatchObject({ actorId: 1, action: 'option.set', ip: '10.0.0.1' });
    expect(JSON.parse(audits[1]!.before!)).toEqual({ value: 'false' });
    expect(JSON.parse(audits[1]!.after!)).toEqual({ value: 'true' });
    expect(audits[2]!.after).not.toContain('gh-secret-value');
    await options.close();
    await pubsub.close();
  });

  it('propagates a change to another instance over Redis pub/sub within a second', async () => {
    const pubA: PubSub = await createRedisPubSub(testRedisUrl());
    const pubB: PubSub = await createRedisPubSub(testRedisUrl());
    const a = new OptionService({ orm: db.orm, pubsub: pubA, channel });
    const b = new OptionService({ em: () => db.orm.em.fork(), pubsub: pubB, channel });
    try {
      await Promise.all([a.load(), b.load()]);
      const changed: string[] = [];
      b.onChange((key) => changed.push(key));
      expect(b.get('SystemName')).toBe('Switchyard');

      await a.set('SystemName', 'Gateway X', 1);
      expect(a.get('SystemName')).toBe('Gateway X');
      await eventually(() => expect(b.get('SystemName')).toBe('Gateway X'));
      expect(changed).toContain('SystemName');

      await b.set('ModelRequestRateLimitEnabled', true, 1);
      await eventually(() => expect(a.get('ModelRequestRateLimitEnabled')).toBe(true));
    } finally {
      await a.close();
      await b.close();
      await pubA.close();
      await pubB.close();
    }
  });

  it('propagates a change to another instance over PostgreSQL LISTEN/NOTIFY within a second (no Redis)', async () => {
    const pubA = await createPgPubSub(db.url);
    const pubB = await createPgPubSub(db.url);
    const a = new OptionService({ orm: db.orm, pubsub: pubA });
    const b = new OptionService({ em: () => db.orm.em.fork(), pubsub: pubB });
    try {
      await Promise.all([a.load(), b.load()]);
      const before = b.get('QuotaPerUnit');
      const sent = Date.now();
      await a.set('QuotaPerUnit', String(before + 1), 1);
      await eventually(() => expect(b.get('QuotaPerUnit')).toBe(before + 1));
      expect(Date.now() - sent).toBeLessThan(1_000);
      await b.set('QuotaPerUnit', String(before), 1);
      await eventually(() => expect(a.get('QuotaPerUnit')).toBe(before));
    } finally {
      await a.close();
      await b.close();
      await pubA.close();
      await pubB.close();
    }
  });

  it('re-reads every option when its PostgreSQL listener reconnects, so a change announced meanwhile is not lost', async () => {
    const pubA = await createPgPubSub(db.url);
    const pubB = await createPgPubSub(db.url, { retryMs: 400 });
    const a = new OptionService({ orm: db.orm, pubsub: pubA });
    const b = new OptionService({ em: () => db.orm.em.fork(), pubsub: pubB });
    const errors = console.error;
    console.error = () => {};
    try {
      await Promise.all([a.load(), b.load()]);
      const conn = db.orm.em.getConnection();
      const listeners = `select pid from pg_stat_activity
        where datname = current_database() and query like 'LISTEN %switchyard:options%'`;
      const pids = (await conn.execute(listeners, [], 'all')) as { pid: number }[];
      expect(pids.length).toBe(2);
      // Kill both listeners; B's comes back only after 400 ms, A's (1 s) later still.
      await conn.execute(`select pg_terminate_backend(pid) from (${listeners}) l`, [], 'all');
      await new Promise((r) => setTimeout(r, 100));
      await a.set('Footer', 'changed while B was not listening', 1);
      await new Promise((r) => setTimeout(r, 100));
      expect(b.get('Footer')).not.toBe('changed while B was not listening');
      await eventually(() => expect(b.get('Footer')).toBe('changed while B was not listening'), 3_000);
    } finally {
      console.error = errors;
      await a.close();
      await b.close();
      await pubA.close();
      await pubB.close();
    }
  });
});

/**
 * The option API (seed 000 §7) through its routes, as the console's browser code calls it: who may list and
 * change options, secrets never returned, values refused with the registry's message and nothing changed, the
 * audit row, the model-ratio reset; and a change reaching a running relay within a second with no Redis
 * (PostgreSQL LISTEN/NOTIFY, ADR 020).
 */
import { isRootOnlyOption, OPTION_KEYS, OPTIONS } from '@switchyard/db/options/registry.ts';
import { OptionService } from '@switchyard/db/options/service.ts';
import { createPgPubSub, type PubSub } from '@switchyard/db/pubsub.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateOption } from '#app/domain/settings/options.server.ts';
import { action as optionAction, loader as optionLoader } from '#app/routes/api.option._index.ts';
import { action as resetAction } from '#app/routes/api.option.rest_model_ratio.ts';
import type { ConsoleServices } from '#app/services.server.ts';
import {
  apiRequest,
  callRoute,
  consoleServices,
  envelopeOf,
  signedInUser,
  startForwardingConsole,
  type Who,
} from './console-harness.ts';
import { type Stack, startStack } from './relay-stack.ts';

let stack: Stack;
let pubsub: PubSub;
let options: OptionService;
let services: ConsoleServices;
let user: Who;
let admin: Who;
let root: Who;

beforeAll(async () => {
  // No Redis: the relay announces and hears option changes over PostgreSQL, and so does this console.
  stack = await startStack({ suffix: 'option_api', env: { RELAY_SYNC_INTERVAL_MS: '600000' } });
  pubsub = await createPgPubSub(stack.db.url);
  options = new OptionService({ orm: stack.orm, pubsub, secrets: stack.secrets });
  await options.load();
  services = { ...consoleServices(stack, null), options };
  user = await signedInUser(stack, { quota: 0 });
  admin = await signedInUser(stack, { quota: 0, role: 10, accessToken: true });
  root = await signedInUser(stack, { quota: 0, role: 100 });
}, 60_000);

afterAll(async () => {
  await options?.close();
  await pubsub?.close();
  await stack?.close();
});

const list = (who: Who | null) => callRoute(optionLoader, services, apiRequest(who, '/api/option/'));
const put = (who: Who | null, body: unknown) =>
  callRoute(optionAction, services, apiRequest(who, '/api/option/', { method: 'PUT', body }));
const stored = async (key: string) =>
  (await stack.sql<{ value: string }>('select value from options where key = ?', [key]))[0]?.value ?? null;
const audits = (key: string) =>
  stack.sql<{ actor_id: number; before: string; after: string; ip: string }>(
    `select actor_id, before, after, ip from audit_entries where action = 'option.set' and target_id = ? order by id`,
    [key],
  );

describe('GET /api/option/', () => {
  it('is for administrators: anonymous 401, user 403, admin and root every registry key', async () => {
    expect((await envelopeOf(await list(null))).status).toBe(401);
    const refused = await envelopeOf(await list(user));
    expect(refused.status).toBe(403);
    expect(refused.body.success).toBe(false);
    for (const who of [admin, root]) {
      const { status, body } = await envelopeOf(await list(who));
      expect(status).toBe(200);
      expect(body.success).toBe(true);
      expect(body.data.map((row: { key: string }) => row.key)).toEqual(OPTION_KEYS);
    }
    const viaToken = await callRoute(
      optionLoader,
      services,
      apiRequest(admin, '/api/option/', { via: 'access_token' }),
    );
    expect((await envelopeOf(viaToken)).body.success).toBe(true);
  });

  it('never returns a secret, only whether it is set', async () => {
    // SMTPToken is root-only to change (ADR 033); administrators list it like any other.
    expect(
      (await envelopeOf(await put(root, { key: 'SMTPToken', value: 'smtp-pass-4242' }))).body.success,
    ).toBe(true);
    const res = await list(admin);
    const text = await res.text();
    expect(text).not.toContain('smtp-pass-4242');
    const rows = JSON.parse(text).data as Record<string, unknown>[];
    const byKey = new Map(rows.map((row) => [row.key, row]));
    expect(byKey.get('SMTPToken')).toEqual({
      key: 'SMTPToken',
      value: '',
      secret: true,
      is_set: true,
      root_only: true,
    });
    expect(byKey.get('GitHubClientSecret')).toEqual({
      key: 'GitHubClientSecret',
      value: '',
      secret: true,
      is_set: false,
      root_only: true,
    });
    for (const key of OPTION_KEYS.filter((k) => OPTIONS[k].secret)) expect(byKey.get(key)?.value).toBe('');
    expect(byKey.get('SystemName')).toEqual({ key: 'SystemName', value: options.getRaw('SystemName') });
  });
});

describe('PUT /api/option/', () => {
  it('is for administrators and changes nothing for anyone else', async () => {
    const before = await stored('Notice');
    expect((await envelopeOf(await put(null, { key: 'Notice', value: 'anon' }))).status).toBe(401);
    const refused = await envelopeOf(await put(user, { key: 'Notice', value: 'user' }));
    expect(refused.status).toBe(403);
    expect(await stored('Notice')).toBe(before);
    expect(await audits('Notice')).toEqual([]);
    const done = await envelopeOf(await put(root, { key: 'Notice', value: 'maintenance at 22:00' }));
    expect(done.body).toMatchObject({ success: true, message: 'Setting updated' });
    expect(options.get('Notice')).toBe('maintenance at 22:00');
  });

  it("takes values as new-api's frontend sends them (strings, 'true'/'false') and as numbers and booleans", async () => {
    const cases: [string, unknown, string, unknown][] = [
      ['RegisterEnabled', 'false', 'false', false],
      ['DrawingEnabled', false, 'false', false],
      ['QuotaForNewUser', 2500, '2500', 2500],
      ['Price', '7.5', '7.5', 7.5],
      ['GroupRatio', { default: 1, vip: 0.8 }, '{"default":1,"vip":0.8}', { default: 1, vip: 0.8 }],
      ['ServerAddress', 'https://gw.example.com/', 'https://gw.example.com', 'https://gw.example.com'],
      ['claude.thinking_adapter_enabled', 'false', 'false', false],
    ];
    for (const [key, value, raw, typed] of cases) {
      // Price and ServerAddress are root-only (ADR 033).
      const { status, body } = await envelopeOf(
        await put(isRootOnlyOption(key) ? root : admin, { key, value }),
      );
      expect([key, status, body.success, body.message]).toEqual([key, 200, true, 'Setting updated']);
      expect(await stored(key)).toBe(raw);
      expect(options.get(key as never)).toEqual(typed);
    }
  });

  it("refuses a bad value with the registry's message and changes nothing", async () => {
    const cases: [string, unknown, string][] = [
      ['DataExportInterval', '0', 'DataExportInterval: must be at least 1'],
      ['RetryTimes', 11, 'RetryTimes: must be at most 10'],
      ['SMTPPort', 'abc', 'SMTPPort: must be an integer'],
      ['GroupRatio', '{"default":', 'GroupRatio: not a valid JSON string'],
      ['LogConsumeEnabled', 'yes', "LogConsumeEnabled: must be 'true' or 'false'"],
      ['DataExportDefaultTime', 'year', 'DataExportDefaultTime: must be one of hour, day, week'],
      ['Notice', null, 'Notice: a value is required (a string, number or boolean)'],
      ['Nope', '1', 'Unknown setting: Nope'],
      ['', '1', 'Say which setting to change (key)'],
    ];
    for (const [key, value, message] of cases) {
      const before = await stored(key);
      const auditsBefore = (await audits(key)).length;
      const { status, body } = await envelopeOf(
        await put(isRootOnlyOption(key) ? root : admin, { key, value }),
      );
      expect([key, status, body.success, body.message]).toEqual([key, 200, false, message]);
      expect(await stored(key)).toBe(before);
      expect((await audits(key)).length).toBe(auditsBefore);
    }
    // In Chinese (the default language) too.
    const zh = apiRequest(admin, '/api/option/', {
      method: 'PUT',
      body: { key: 'DataExportInterval', value: 0 },
    });
    zh.headers.set('Accept-Language', 'zh');
    const { body } = await envelopeOf(await callRoute(optionAction, services, zh));
    expect(body.message).toBe('DataExportInterval：不能小于 1');
  });

  it('audits a change with who made it and redacts secrets', async () => {
    const res = await put(root, { key: 'TurnstileSecretKey', value: 'ts-secret-777' });
    expect((await envelopeOf(res)).body.success).toBe(true);
    const [row] = (await audits('TurnstileSecretKey')).slice(-1);
    expect(row?.actor_id).toBe(root.id);
    expect(JSON.parse(row!.after)).toEqual({ value: '[redacted]' });
    expect(JSON.stringify(await audits('TurnstileSecretKey'))).not.toContain('ts-secret-777');
    expect(options.get('TurnstileSecretKey')).toBe('ts-secret-777');

    await put(root, { key: 'PasswordLoginEnabled', value: 'false' });
    const [login] = (await audits('PasswordLoginEnabled')).slice(-1);
    expect(login?.actor_id).toBe(root.id);
    expect(JSON.parse(login!.after)).toEqual({ value: 'false' });
    await put(root, { key: 'PasswordLoginEnabled', value: 'true' });
  });

  it('takes every registry key from root (its default value is accepted and stored)', async () => {
    const refused: string[] = [];
    for (const key of OPTION_KEYS) {
      const { body } = await envelopeOf(await put(root, { key, value: OPTIONS[key].default }));
      if (!body.success) refused.push(`${key}: ${body.message}`);
      else expect([key, options.getRaw(key)]).toEqual([key, OPTIONS[key].default]);
    }
    expect(refused).toEqual([]);
    // seed 000 §3, the Gemini/Claude model settings, WeChat Pay's public key and its id (ADR 027), and
    // ImageRatio (issue 18: gpt-image-1's image input tokens)
    expect(OPTION_KEYS.length).toBe(112);
  });

  it('answers 405 for other methods', async () => {
    const res = await callRoute(
      optionAction,
      services,
      apiRequest(admin, '/api/option/', { method: 'POST', body: {} }),
    );
    expect(res.status).toBe(405);
    expect((await res.json()).success).toBe(false);
  });
});

describe('POST /api/option/rest_model_ratio', () => {
  it('puts ModelPrice, ModelRatio and CompletionRatio back to the defaults (admin only)', async () => {
    await put(admin, { key: 'ModelRatio', value: '{"my-model":3}' });
    await put(admin, { key: 'CompletionRatio', value: '{"my-model":2}' });
    const reset = (who: Who) =>
      callRoute(resetAction, services, apiRequest(who, '/api/option/rest_model_ratio', { method: 'POST' }));
    expect((await reset(user)).status).toBe(403);
    expect(options.get('ModelRatio')).toEqual({ 'my-model': 3 });
    const { status, body } = await envelopeOf(await reset(admin));
    expect(status).toBe(200);
    expect(body.success).toBe(true);
    expect(options.getRaw('ModelRatio')).toBe(OPTIONS.ModelRatio.default);
    expect(options.getRaw('CompletionRatio')).toBe(OPTIONS.CompletionRatio.default);
    expect((await audits('ModelRatio')).at(-1)?.actor_id).toBe(admin.id);
  });
});

describe('propagation without Redis', () => {
  it('a price changed through updateOption reaches the running relay within a second', async () => {
    const relayOptions = stack.relays[0]!.pipeline!.options;
    const ratio = (relayOptions.get('ModelRatio')['gpt-4o'] ?? 0) + 1.5;
    const next = { ...options.get('ModelRatio'), 'gpt-4o': ratio };
    const ctx = {
      options,
      actor: { ...admin, role: 10 } as never,
      t: ((k: string) => k) as never,
      ip: '127.0.0.1',
    };
    const sent = Date.now();
    await updateOption(ctx, 'ModelRatio', JSON.stringify(next));
    const deadline = sent + 1_000;
    while (relayOptions.get('ModelRatio')['gpt-4o'] !== ratio) {
      if (Date.now() > deadline) throw new Error('the relay did not see the new price within a second');
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(Date.now() - sent).toBeLessThan(1_000);
  });

  it('a PUT to the console process (npm start without REDIS_URL) reaches the relay and other consoles within a second', async () => {
    const console_ = await startForwardingConsole(stack);
    try {
      const relayOptions = stack.relays[0]!.pipeline!.options;
      const value = `Gateway ${Date.now()}`;
      const res = await fetch(`${console_.url}/api/option/`, {
        method: 'PUT',
        headers: {
          Cookie: `sy_session=${admin.session}`,
          'New-Api-User': String(admin.id),
          'Content-Type': 'application/json',
          Origin: console_.url,
        },
        body: JSON.stringify({ key: 'SystemName', value }),
      });
      expect(((await res.json()) as { success: boolean }).success).toBe(true);
      // From the answer on (the first request also waits for Vite to compile the route).
      const deadline = Date.now() + 1_000;
      while (relayOptions.get('SystemName') !== value || options.get('SystemName') !== value) {
        if (Date.now() > deadline)
          throw new Error('the change did not reach the relay and this console in time');
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(console_.services.options.get('SystemName')).toBe(value);
    } finally {
      await console_.stop();
    }
  }, 60_000);
});

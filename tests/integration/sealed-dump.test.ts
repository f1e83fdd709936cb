/**
 * Issue 23 item 4 and item 9 (ADR 035), through the real parts: with SECRETS_KEY, users, `sk-` tokens, a channel
 * key, a webhook secret and a secret option are created by the console's routes, and a pg_dump of the database
 * holds none of them in the clear; tokens are found by their keyed hash by real relay processes; a token written
 * before the upgrade (a plaintext row) keeps working and is sealed by `secrets:rotate`, which is idempotent and
 * keeps every token working across a key change. Item 9: a channel whose stored key does not open is disabled
 * with a reason at start and at reload, and the other channels serve.
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { rotateSecrets } from '@switchyard/db/security/rotate.ts';
import {
  assertSecretsReadable,
  createSecretBox,
  type SecretBox,
  webhookSecretSlot,
} from '@switchyard/db/security/secrets.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notifyUser } from '#app/domain/notify/notifier.server.ts';
import { recordQuotaWarnings } from '#app/domain/notify/outbox.server.ts';
import { action as channelAction } from '#app/routes/api.channel._index.ts';
import { action as optionAction } from '#app/routes/api.option._index.ts';
import { action as tokenAction, loader as tokenListLoader } from '#app/routes/api.token._index.ts';
import { loader as tokenSearchLoader } from '#app/routes/api.token.search.ts';
import { action as settingAction } from '#app/routes/api.user.setting.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';
import {
  apiRequest,
  callRoute,
  consoleServices,
  envelopeOf,
  signedInUser,
  type Who,
} from './console-harness.ts';
import {
  reload,
  type Stack,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from './relay-stack.ts';

const KEY_1 = Buffer.alloc(32, 0x41).toString('base64');
const KEY_2 = Buffer.alloc(32, 0x42).toString('hex');
const CHANNEL_KEY = 'sk-upstream-sealed-channel-key-0123456789';
const WEBHOOK_SECRET = 'whsec-users-own-webhook-secret-abcdef';
const LEGACY_WEBHOOK_SECRET = 'whsec-legacy-plaintext-webhook-secret';
const SMTP_SECRET = 'smtp-password-sealed-in-options';
/** A channel key written before the upgrade (plaintext row). */
const OTHER_CHANNEL_KEY = 'sk-other-channel-key-legacy-row';

let stack: Stack;
let fake: FakeOpenAI;
let root: Who;
let owner: Who;
/** Every token key the test knows, without sk- (created through the console, and the legacy one). */
const tokenKeys: string[] = [];
let legacyKey = '';
let box: SecretBox;

let hook: http.Server;
let hookUrl = '';
const hookAuth: string[] = [];

beforeAll(async () => {
  hook = http.createServer((req, res) => {
    hookAuth.push(String(req.headers.authorization ?? ''));
    req.resume();
    res.writeHead(204).end();
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  hookUrl = `http://localhost:${(hook.address() as AddressInfo).port}/hook`;
  fake = await startFakeOpenAI({ keys: [CHANNEL_KEY, OTHER_CHANNEL_KEY] });
  stack = await startStack({ suffix: 'sealed_dump', secretsKey: KEY_1, relays: 0 });
  box = stack.secrets;
  root = await signedInUser(stack, { quota: 1_000_000, role: 100 });
  owner = await signedInUser(stack, { quota: 500_000_000 });
  // A row written before the upgrade: a plaintext key with no hash, and a plaintext webhook secret.
  const legacyUser = await seedUser(stack, { quota: 100_000_000 });
  legacyKey = (await seedToken(stack, legacyUser.id, { unlimited: true })).key;
  tokenKeys.push(legacyKey);
  await stack.sql('update users set setting = ? where id = ?', [
    JSON.stringify({ notify_type: 'webhook', webhook_url: hookUrl, webhook_secret: LEGACY_WEBHOOK_SECRET }),
    legacyUser.id,
  ]);
  await setOptions(stack, { ModelRatio: JSON.stringify({ 'seal-m': 1, 'other-m': 1 }) });
  await stack.addRelay();
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await fake?.close();
  await new Promise<void>((r) => hook?.close(() => r()));
});

const services = (secrets: SecretBox = box) => ({ ...consoleServices(stack, null), secrets });

async function chat(relayIndex: number, key: string, model = 'seal-m'): Promise<number> {
  const relay = stack.relays[relayIndex];
  if (!relay) throw new Error('no relay');
  const res = await fetch(`${relay.httpUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { Authorization: `Bearer sk-${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.body?.cancel();
  return res.status;
}

/** Status of every known token on a relay (a fresh relay finds each through the database, not its cache). */
const statuses = async (relayIndex: number) => Promise.all(tokenKeys.map((k) => chat(relayIndex, k)));

/** The whole database as pg_dump writes it (schema and data), or every row as text when pg_dump is missing. */
async function dumpDatabase(): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)('pg_dump', ['--no-owner', stack.db.url], {
      maxBuffer: 256 * 1024 * 1024,
    });
    return stdout;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    const tables = await stack.sql<{ t: string }>(
      `select tablename as t from pg_tables where schemaname = 'public'`,
    );
    const parts: string[] = [];
    for (const { t } of tables) {
      const rows = await stack.sql<{ r: string }>(`select x::text as r from "${t}" x`);
      parts.push(...rows.map((row) => row.r));
    }
    return parts.join('\n');
  }
}

/** Which known secrets a dump holds in the clear: each `sk-` key and its 48-character body, and the others. */
function plaintextIn(dump: string): string[] {
  const secrets = [
    ...tokenKeys.flatMap((k) => [`sk-${k}`, k]),
    CHANNEL_KEY,
    OTHER_CHANNEL_KEY,
    WEBHOOK_SECRET,
    LEGACY_WEBHOOK_SECRET,
    SMTP_SECRET,
  ];
  return secrets.filter((s) => dump.includes(s));
}

describe('sealed at rest (SECRETS_KEY set)', () => {
  it('keeps a token written before the upgrade working (plaintext row, no hash)', async () => {
    await seedChannel(stack, { baseUrl: fake.url, models: ['other-m'], key: OTHER_CHANNEL_KEY });
    const created = await envelopeOf(
      await callRoute(
        channelAction,
        services(),
        apiRequest(root, '/api/channel/', {
          method: 'POST',
          body: {
            name: 'sealed',
            type: 1,
            key: CHANNEL_KEY,
            base_url: fake.url,
            models: 'seal-m',
            groups: ['default'],
          },
        }),
      ),
    );
    expect(created.body.success).toBe(true);
    await reload(stack);
    expect(await chat(0, legacyKey)).toBe(200);
  });

  it('stores tokens, the webhook secret and secret options sealed; the owner still reads and copies the key', async () => {
    const made = await envelopeOf(
      await callRoute(
        tokenAction,
        services(),
        apiRequest(owner, '/api/token/', {
          method: 'POST',
          body: { name: 'sealed', unlimited_quota: true, count: 3 },
        }),
      ),
    );
    expect(made.body.success).toBe(true);
    const keys = (made.body.data as { id: number; key: string }[]).map((t) => t.key);
    expect(keys).toHaveLength(3);
    for (const k of keys) expect(k).toMatch(/^[0-9A-Za-z]{48}$/);
    tokenKeys.push(...keys);

    const rows = await stack.sql<{ key: string; key_hash: string | null }>(
      'select key, key_hash from tokens where user_id = ? order by id',
      [owner.id],
    );
    for (const row of rows) {
      expect(row.key).toMatch(/^enc:v1:[0-9a-f]{8}:/);
      expect(row.key_hash).toMatch(new RegExp(`^${box.keyId}:[A-Za-z0-9_-]{43}$`));
    }

    // The copy-a-key feature: the owner's list and a search by prefix or by the whole key show the key.
    const list = await envelopeOf(
      await callRoute(tokenListLoader, services(), apiRequest(owner, '/api/token/')),
    );
    expect(new Set((list.body.data.items as { key: string }[]).map((t) => t.key))).toEqual(new Set(keys));
    for (const q of [`sk-${keys[1]}`, String(keys[1]).slice(0, 10)]) {
      const found = await envelopeOf(
        await callRoute(
          tokenSearchLoader,
          services(),
          apiRequest(owner, `/api/token/search?token=${encodeURIComponent(q)}`),
        ),
      );
      expect(found.body.data.items.map((t: { key: string }) => t.key)).toEqual([keys[1]]);
    }

    const saved = await envelopeOf(
      await callRoute(
        settingAction,
        services(),
        apiRequest(owner, '/api/user/setting', {
          method: 'PUT',
          body: {
            notify_type: 'webhook',
            quota_warning_threshold: 500000,
            webhook_url: 'https://hooks.example.com/q',
            webhook_secret: WEBHOOK_SECRET,
          },
        }),
      ),
    );
    expect(saved.body.success).toBe(true);
    const option = await envelopeOf(
      await callRoute(
        optionAction,
        services(),
        apiRequest(root, '/api/option/', { method: 'PUT', body: { key: 'SMTPToken', value: SMTP_SECRET } }),
      ),
    );
    expect(option.body.success).toBe(true);

    // The relay finds the sealed tokens by their keyed hash; a stored ciphertext or hash is no key.
    for (const k of keys) expect(await chat(0, k)).toBe(200);
    const [sealed] = rows;
    expect(await chat(0, String(sealed?.key))).toBe(401);
    expect(await chat(0, String(sealed?.key_hash))).toBe(401);
  });

  it('signs webhooks with the opened secret', async () => {
    const [row] = await stack.sql<{ setting: string }>('select setting from users where id = ?', [owner.id]);
    expect(row?.setting).not.toContain(WEBHOOK_SECRET);
    const setting = { ...JSON.parse(String(row?.setting)), webhook_url: hookUrl };
    process.env.NOTIFY_ALLOW_PRIVATE_ADDRESSES = 'true';
    const result = await notifyUser(
      services(),
      { id: owner.id, email: '', setting: JSON.stringify(setting) },
      { type: 'quota_exceed', title: 't', content: 'c' },
      { allowInsecureForTests: true },
    );
    delete process.env.NOTIFY_ALLOW_PRIVATE_ADDRESSES;
    expect(result).toMatchObject({ ok: true, channel: 'webhook' });
    expect(hookAuth.at(-1)).toBe(`Bearer ${WEBHOOK_SECRET}`);
  });

  it('secrets:rotate seals the rows from before; the dump then holds no secret in the clear', async () => {
    // Before the rotation the legacy rows are the only plaintext.
    expect(plaintextIn(await dumpDatabase()).sort()).toEqual(
      [legacyKey, OTHER_CHANNEL_KEY, LEGACY_WEBHOOK_SECRET].sort(),
    );
    const done = await rotateSecrets(stack.orm, box);
    expect(Object.fromEntries(done.map((c) => [c.table, c.changed]))).toEqual({
      channels: 1,
      options: 0,
      tokens: 1,
      users: 1,
      notification_outbox: 0,
    });
    const found = plaintextIn(await dumpDatabase());
    console.log(`plaintext secrets found in a dump of a SECRETS_KEY database: ${found.length}`);
    expect(found).toEqual([]);

    // The legacy webhook secret, now sealed too, still signs.
    const [legacy] = await stack.sql<{ id: number; setting: string }>(
      `select id, setting from users where setting like '%webhook%' and id <> ?`,
      [owner.id],
    );
    expect(legacy?.setting).toMatch(/"webhook_secret":"enc:v1:/);
    process.env.NOTIFY_ALLOW_PRIVATE_ADDRESSES = 'true';
    const sent = await notifyUser(
      services(),
      { id: Number(legacy?.id), email: '', setting: String(legacy?.setting) },
      { type: 'quota_exceed', title: 't', content: 'c' },
      { allowInsecureForTests: true },
    );
    delete process.env.NOTIFY_ALLOW_PRIVATE_ADDRESSES;
    expect(sent).toMatchObject({ ok: true });
    expect(hookAuth.at(-1)).toBe(`Bearer ${LEGACY_WEBHOOK_SECRET}`);

    // Rotating again changes nothing.
    expect((await rotateSecrets(stack.orm, box)).map((c) => c.changed)).toEqual([0, 0, 0, 0, 0]);

    // The legacy token, now sealed, works on a relay that has to find it in the database.
    const fresh = stack.relays.indexOf(await stack.addRelay());
    expect(await statuses(fresh)).toEqual(tokenKeys.map(() => 200));
  });

  it('keeps every token working across a rotation to a new key', async () => {
    const next = await createSecretBox({ key: KEY_2, previous: KEY_1 });
    // During the rotation, processes hold both keys: lookups probe both hashes.
    const both = stack.relays.indexOf(
      await stack.addRelay({ SECRETS_KEY: KEY_2, SECRETS_KEY_PREVIOUS: KEY_1 }),
    );
    expect(await statuses(both)).toEqual(tokenKeys.map(() => 200));
    // A quota warning Billing wrote for the owner: its payload carries a copy of the (sealed) setting.
    const [ownerRow] = await stack.sql<{ setting: string }>('select setting from users where id = ?', [
      owner.id,
    ]);
    await stack.orm.em
      .fork()
      .transactional((tx) =>
        recordQuotaWarnings(
          tx,
          [{ userId: owner.id, email: '', setting: String(ownerRow?.setting), quota: 1, threshold: 2 }],
          Date.now(),
        ),
      );
    const done = await rotateSecrets(stack.orm, next);
    expect(Object.fromEntries(done.map((c) => [c.table, c.changed]))).toEqual({
      channels: 2,
      options: 1,
      tokens: tokenKeys.length,
      users: 2,
      notification_outbox: 1,
    });
    // The start check sees every one of them under the new key: a process with only the old key refuses.
    const message = await assertSecretsReadable(
      async (sql, params) => stack.orm.em.getConnection().execute(sql, params ?? [], 'all'),
      await createSecretBox({ key: KEY_1 }),
    ).then(
      () => '',
      (err: Error) => err.message,
    );
    for (const place of [
      'channels.key',
      'options.value',
      'tokens.key',
      'users.setting',
      'notification_outbox.payload',
    ])
      expect(message).toContain(`in ${place} under key ${next.keyId}`);
    // The outbox copy opens with the user's slot under the new key.
    const [outbox] = await stack.sql<{ payload: string }>(
      'select payload from notification_outbox where user_id = ?',
      [owner.id],
    );
    expect(outbox?.payload).not.toContain(WEBHOOK_SECRET);
    const copy = JSON.parse(String(JSON.parse(String(outbox?.payload)).setting));
    expect(await next.open(copy.webhook_secret, webhookSecretSlot(owner.id))).toBe(WEBHOOK_SECRET);
    const only = stack.relays.indexOf(await stack.addRelay({ SECRETS_KEY: KEY_2 }));
    expect(await statuses(only)).toEqual(tokenKeys.map(() => 200));
    const list = await envelopeOf(
      await callRoute(
        tokenListLoader,
        services(await createSecretBox({ key: KEY_2 })),
        apiRequest(owner, '/api/token/'),
      ),
    );
    expect(list.body.data.items.length).toBe(3);
    expect(plaintextIn(await dumpDatabase())).toEqual([]);
  });
});

describe('a channel whose key does not open (item 9)', () => {
  it('is disabled with a reason at start and at reload; the other channels serve', async () => {
    const victim = (await seedChannel(stack, { baseUrl: fake.url, models: ['victim-m'], key: 'sk-x' })).id;
    const [donor] = await stack.sql<{ id: number; key: string }>(
      `select id, key from channels where key like 'enc:%' order by id limit 1`,
    );
    // A ciphertext moved from another row: sealed under a key the process holds, but not for this row.
    await stack.sql('update channels set key = ? where id = ?', [donor?.key, victim]);
    const relay = await stack.addRelay({ SECRETS_KEY: KEY_2 });
    const index = stack.relays.indexOf(relay);
    const [row] = await stack.sql<{ status: number; other_info: string }>(
      'select status, other_info from channels where id = ?',
      [victim],
    );
    expect(row?.status).toBe(3);
    expect(JSON.parse(String(row?.other_info)).status_reason).toContain('key cannot be decrypted');
    expect(await chat(index, legacyKey, 'seal-m')).toBe(200);
    expect(await chat(index, legacyKey, 'other-m')).toBe(200);

    // While running: another row altered, then a reload.
    const [other] = await stack.sql<{ id: number; key: string }>(
      `select id, key from channels where model_mapping = '' and models = 'other-m'`,
    );
    const sealedOther = await createSecretBox({ key: KEY_2 }).then((b) =>
      b.seal(OTHER_CHANNEL_KEY, `channels.key:${other?.id}`),
    );
    const altered = `${sealedOther.slice(0, -6)}AAAAAA`;
    await stack.sql('update channels set key = ? where id = ?', [altered, other?.id]);
    await relay.pipeline?.invalidate([], [], true);
    const [after] = await stack.sql<{ status: number; other_info: string }>(
      'select status, other_info from channels where id = ?',
      [other?.id],
    );
    expect(after?.status).toBe(3);
    expect(JSON.parse(String(after?.other_info)).status_reason).toContain('key cannot be decrypted');
    expect(await chat(index, legacyKey, 'seal-m')).toBe(200);
    expect(await chat(index, legacyKey, 'other-m')).toBe(503);
  });
});

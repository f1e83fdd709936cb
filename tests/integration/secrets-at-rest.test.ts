/**
 * Secrets at rest (issue 13 item 10, ADR 019) through the real parts: the console's routes and option service on
 * PostgreSQL with SECRETS_KEY, the relay process serving the channel to a fake upstream that records the key it
 * received, the rotation command's walk, and the hashed system access token.
 */
import { Buffer } from 'node:buffer';
import { OptionService } from '@switchyard/db/options/service.ts';
import { createMemoryPubSub } from '@switchyard/db/pubsub.ts';
import { rotateSecrets } from '@switchyard/db/security/rotate.ts';
import { createSecretBox, type SecretBox, sealedKeyId } from '@switchyard/db/security/secrets.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessTokenHash } from '#app/domain/auth/session.server.ts';
import { action as channelAction } from '#app/routes/api.channel._index.ts';
import { loader as channelByIdLoader } from '#app/routes/api.channel.$id.ts';
import { loader as userByIdLoader } from '#app/routes/api.user.$id.ts';
import { loader as selfLoader } from '#app/routes/api.user.self.ts';
import { loader as tokenLoader } from '#app/routes/api.user.token.ts';
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

const OLD_KEY = Buffer.alloc(32, 0x11).toString('base64');
const NEW_KEY = Buffer.alloc(32, 0x22).toString('hex');
const UPSTREAM_KEY = 'sk-upstream-created-through-the-console';
const LEGACY_KEY = 'sk-upstream-legacy-plaintext-row';
const SMTP_PASSWORD = 'smtp-password-never-in-a-row';

let stack: Stack;
let fake: FakeOpenAI;
let admin: Who;
let caller: { key: string };

beforeAll(async () => {
  fake = await startFakeOpenAI({ keys: [UPSTREAM_KEY, LEGACY_KEY] });
  stack = await startStack({ suffix: 'secrets_at_rest', secretsKey: OLD_KEY });
  await seedUser(stack, { quota: 1_000_000, role: 100 }); // root (id 1)
  admin = await signedInUser(stack, { quota: 1_000_000, role: 100, accessToken: true });
  const u = await seedUser(stack, { quota: 100_000_000 });
  caller = await seedToken(stack, u.id, { remainQuota: 50_000_000 });
  await setOptions(stack, { ModelRatio: JSON.stringify({ 'enc-m': 1, 'legacy-m': 1 }) });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await fake?.close();
});

const services = () => consoleServices(stack, null);

async function chat(relayIndex: number, model: string) {
  const relay = stack.relays[relayIndex];
  if (!relay) throw new Error('no relay');
  const res = await fetch(`${relay.httpUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${caller.key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The Authorization header of the upstream request for `model` made after `since`. */
function upstreamAuthFor(model: string, since: number): string | undefined {
  return fake.requests.filter((r) => r.time >= since && r.body?.model === model).at(-1)?.headers
    .authorization;
}

async function rawKey(id: number): Promise<string> {
  const [row] = await stack.sql<{ key: string }>('select key from channels where id = ?', [id]);
  return String(row?.key);
}

let channelId = 0;
let legacyId = 0;

describe('with SECRETS_KEY', () => {
  it('stores a channel created by the console and a secret option encrypted; the relay still sends the key', async () => {
    const created = await envelopeOf(
      await callRoute(
        channelAction,
        services(),
        apiRequest(admin, '/api/channel/', {
          method: 'POST',
          body: {
            name: 'enc',
            type: 1,
            key: UPSTREAM_KEY,
            base_url: fake.url,
            models: 'enc-m',
            groups: ['default'],
          },
        }),
      ),
    );
    expect(created.body.success).toBe(true);
    channelId = created.body.data[0];
    await stack.options.set('SMTPToken', SMTP_PASSWORD, admin.id);

    const stored = await rawKey(channelId);
    expect(stored).toMatch(/^enc:v1:[0-9a-f]{8}:/);
    expect(stored).not.toContain('upstream');
    const [opt] = await stack.sql<{ value: string }>(`select value from options where key = 'SMTPToken'`);
    expect(opt?.value).toMatch(/^enc:v1:/);
    // Nowhere in the database: not in the rows, not in the audit trail.
    const dump = await stack.sql<{ t: string }>(
      `select string_agg(x::text, ' ') as t from (select c::text as x from channels c
         union all select o::text from options o union all select a::text from audit_entries a) s`,
    );
    expect(dump[0]?.t).not.toContain(UPSTREAM_KEY);
    expect(dump[0]?.t).not.toContain(SMTP_PASSWORD);

    // The option service reads it back in plaintext (another process loading from the rows).
    const other = new OptionService({ orm: stack.orm, pubsub: createMemoryPubSub(), secrets: stack.secrets });
    await other.load();
    expect(other.get('SMTPToken')).toBe(SMTP_PASSWORD);
    await other.close();

    // The admin's edit form gets the key; the relay serves the channel with it.
    const one = await envelopeOf(
      await callRoute(channelByIdLoader, services(), apiRequest(admin, `/api/channel/${channelId}`), {
        id: String(channelId),
      }),
    );
    expect(one.body.data.key).toBe(UPSTREAM_KEY);
    await reload(stack);
    const since = Date.now();
    const answer = await chat(0, 'enc-m');
    expect(answer.status).toBe(200);
    expect(upstreamAuthFor('enc-m', since)).toBe(`Bearer ${UPSTREAM_KEY}`);
  });

  it('reads a plaintext row from before the key next to encrypted ones (mixed table)', async () => {
    legacyId = (await seedChannel(stack, { baseUrl: fake.url, models: ['legacy-m'], key: LEGACY_KEY })).id;
    await reload(stack);
    const since = Date.now();
    expect((await chat(0, 'legacy-m')).status).toBe(200);
    expect(upstreamAuthFor('legacy-m', since)).toBe(`Bearer ${LEGACY_KEY}`);
  });

  it('refuses a ciphertext moved to another row', async () => {
    const mine = await rawKey(channelId);
    const victim = (await seedChannel(stack, { baseUrl: fake.url, models: ['moved-m'], key: 'sk-victim' }))
      .id;
    await stack.sql('update channels set key = ? where id = ?', [mine, victim]);
    const read = await envelopeOf(
      await callRoute(channelByIdLoader, services(), apiRequest(admin, `/api/channel/${victim}`), {
        id: String(victim),
      }),
    );
    expect(read).toMatchObject({ status: 200, body: { success: false } });
    expect(read.body.message).toContain(`channel #${victim} cannot be decrypted`);
    expect(JSON.stringify(read.body)).not.toContain(UPSTREAM_KEY);
    await expect(stack.relays[0]?.pipeline?.repo.channelById(victim)).rejects.toThrow(/another row/);
    await stack.sql('delete from channels where id = ?', [victim]);
  });

  it('refuses to start a relay without the key, or with another key, naming the problem', async () => {
    await expect(stack.addRelay({ SECRETS_KEY: '' })).rejects.toThrow(/SECRETS_KEY is not set/);
    await expect(stack.addRelay({ SECRETS_KEY: NEW_KEY })).rejects.toThrow(/cannot be read/);
  });
});

describe('secrets:rotate', () => {
  let next: SecretBox;

  it('counts in a dry run, re-encrypts every secret under the new key, and changes nothing the second time', async () => {
    // Without the old key nothing is written at all.
    const before = await rawKey(channelId);
    await expect(rotateSecrets(stack.orm, await createSecretBox({ key: NEW_KEY }))).rejects.toThrow(
      /cannot be read/,
    );
    expect(await rawKey(channelId)).toBe(before);
    expect(await rawKey(legacyId)).toBe(LEGACY_KEY);

    next = await createSecretBox({ key: NEW_KEY, previous: OLD_KEY });
    const dry = await rotateSecrets(stack.orm, next, { dryRun: true });
    const channels = dry.find((c) => c.table === 'channels');
    expect(channels).toMatchObject({ plaintext: 1, changed: 2 });
    expect(channels?.sealed[stack.secrets.keyId ?? '']).toBe(1);
    expect(dry.find((c) => c.table === 'options')).toMatchObject({ plaintext: 0, changed: 1 });
    expect(await rawKey(legacyId)).toBe(LEGACY_KEY); // a dry run writes nothing

    const done = await rotateSecrets(stack.orm, next);
    // channels, options, tokens (the caller's token, seeded as a plaintext row), users, notification_outbox
    expect(done.map((c) => c.changed)).toEqual([2, 1, 1, 0, 0]);
    for (const id of [channelId, legacyId]) expect(sealedKeyId(await rawKey(id))).toBe(next.keyId);
    const [opt] = await stack.sql<{ value: string }>(`select value from options where key = 'SMTPToken'`);
    expect(sealedKeyId(String(opt?.value))).toBe(next.keyId);
    expect((await rotateSecrets(stack.orm, next)).map((c) => c.changed)).toEqual([0, 0, 0, 0, 0]);
  });

  it('leaves a product that works with the new key only', async () => {
    const only = await createSecretBox({ key: NEW_KEY });
    const options = new OptionService({ orm: stack.orm, pubsub: createMemoryPubSub(), secrets: only });
    await options.load();
    expect(options.get('SMTPToken')).toBe(SMTP_PASSWORD);
    await options.close();

    const fresh = await stack.addRelay({ SECRETS_KEY: NEW_KEY });
    const index = stack.relays.indexOf(fresh);
    for (const [model, key] of [
      ['enc-m', UPSTREAM_KEY],
      ['legacy-m', LEGACY_KEY],
    ] as const) {
      const since = Date.now();
      expect((await chat(index, model)).status).toBe(200);
      expect(upstreamAuthFor(model, since)).toBe(`Bearer ${key}`);
    }
    // A relay with only the old key no longer starts.
    await expect(stack.addRelay({ SECRETS_KEY: OLD_KEY })).rejects.toThrow(/cannot be read/);
  });
});

describe('system access token', () => {
  it('is stored as its SHA-256, works once shown, and no answer returns it or its hash again', async () => {
    const issued = await envelopeOf(
      await callRoute(tokenLoader, services(), apiRequest(admin, '/api/user/token')),
    );
    const token = String(issued.body.data);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const [row] = await stack.sql<{ access_token: string }>('select access_token from users where id = ?', [
      admin.id,
    ]);
    expect(row?.access_token).toBe(await accessTokenHash(token));
    expect(row?.access_token).not.toContain(token);

    const withToken: Who = { ...admin, accessToken: token };
    const self = await callRoute(
      selfLoader,
      services(),
      apiRequest(withToken, '/api/user/self', { via: 'access_token' }),
    );
    const selfText = await self.text();
    expect(JSON.parse(selfText).data.id).toBe(admin.id);
    const byId = await (
      await callRoute(userByIdLoader, services(), apiRequest(admin, `/api/user/${admin.id}`), {
        id: String(admin.id),
      })
    ).text();
    for (const text of [selfText, byId]) {
      expect(text).toContain(admin.username);
      expect(text).not.toContain(token);
      expect(text).not.toContain(String(row?.access_token));
      expect(text).not.toContain('access_token');
    }
    // The stored hash is not a credential.
    const byHash = await callRoute(
      selfLoader,
      services(),
      apiRequest({ ...admin, accessToken: String(row?.access_token) }, '/api/user/self', {
        via: 'access_token',
      }),
    );
    expect((await envelopeOf(byHash)).status).toBe(401);
  });

  it('keeps a token issued before the migration working (the migration hashes it)', async () => {
    const migrator = stack.orm.migrator;
    const name = 'Migration20261125165000_access_token_hash';
    await migrator.down({ migrations: [name] });
    const legacy = `legacy${crypto.randomUUID().replaceAll('-', '')}`;
    await stack.sql('update users set access_token = ? where id = ?', [legacy, admin.id]);
    await migrator.up({ migrations: [name] });
    const [row] = await stack.sql<{ access_token: string }>('select access_token from users where id = ?', [
      admin.id,
    ]);
    expect(row?.access_token).toBe(await accessTokenHash(legacy));
    const self = await callRoute(
      selfLoader,
      services(),
      apiRequest({ ...admin, accessToken: legacy }, '/api/user/self', { via: 'access_token' }),
    );
    expect((await envelopeOf(self)).body.data.id).toBe(admin.id);
  });
});

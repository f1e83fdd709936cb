/**
 * "The console never offers a type the relay cannot serve": the channel form's type list and POST/PUT
 * /api/channel/ follow the relay's ListChannelTypes (a real relay over gRPC on a real database), with a short
 * cache and a visible fallback when the relay cannot be reached.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CHANNEL_TYPES, typeOptions } from '#app/domain/channels/constants.ts';
import {
  CACHE_MS,
  clearServedTypesCache,
  servedChannelTypes,
} from '#app/domain/channels/served-types.server.ts';
import {
  createRelayClient,
  type RelayClient,
  type ServedChannelType,
} from '#app/grpc/relay-client.server.ts';
import { action as channelApi } from '#app/routes/api.channel._index.ts';
import { loader as editLoader } from '#app/routes/channel.$id.edit.tsx';
import { loader as newLoader } from '#app/routes/channel.new.tsx';
import type { ConsoleServices } from '#app/services.server.ts';
import { ADAPTORS } from '../../../relay-service/src/providers/registry.ts';
import {
  apiRequest,
  callRoute,
  consoleServices,
  envelopeOf,
  signedInUser,
  type Who,
} from '../../../tests/integration/console-harness.ts';
import { type Stack, seedChannel, startStack } from '../../../tests/integration/relay-stack.ts';

const SECRET = 'served-types-secret-0123456789abcdef';
let stack: Stack;
let relay: RelayClient;
let downRelay: RelayClient;
let services: ConsoleServices;
let downServices: ConsoleServices;
let admin: Who;

/**
 * A catalogue type the relay does not report. Every catalogue type is served since issue 18, so the console talks
 * to the real relay through a client that leaves this one out of ListChannelTypes, as an older relay would during
 * a rolling upgrade (the rest of the answer is the real RPC's).
 */
const UNSERVED = 33;
/** What the relay of this branch serves (its adaptors and the task types), less UNSERVED. */
const SERVED = new Set([...ADAPTORS.flatMap((a) => a.channelTypes), 2, 5, 36].filter((t) => t !== UNSERVED));

beforeAll(async () => {
  stack = await startStack({ suffix: 'served_types', env: { INTERNAL_API_SECRET: SECRET } });
  admin = await signedInUser(stack, { quota: 0, role: 10 });
  const real = createRelayClient(stack.relays[0]!.grpcAddress, { internalSecret: SECRET, timeoutMs: 10_000 });
  relay = {
    ...real,
    listChannelTypes: async (opts) => (await real.listChannelTypes(opts)).filter((t) => t.type !== UNSERVED),
  };
  downRelay = createRelayClient('127.0.0.1:1', { internalSecret: SECRET, timeoutMs: 1_000 });
  services = consoleServices(stack, relay);
  downServices = consoleServices(stack, downRelay);
}, 60_000);

afterAll(async () => {
  relay?.close();
  downRelay?.close();
  await stack?.close();
});

beforeEach(() => clearServedTypesCache());

const page = async (
  fn: typeof newLoader | typeof editLoader,
  s: ConsoleServices,
  path: string,
  params = {},
) =>
  (await callRoute(fn as never, s, apiRequest(admin, path), params)) as unknown as Awaited<
    ReturnType<typeof newLoader>
  >;

const post = (s: ConsoleServices, body: Record<string, unknown>, method = 'POST') =>
  callRoute(channelApi as never, s, apiRequest(admin, '/api/channel/', { method, body })).then(envelopeOf);

describe('channel types from the relay', () => {
  it('the create form offers exactly the served types, in the console order with its labels', async () => {
    expect(SERVED.has(UNSERVED)).toBe(false);
    const loaded = await page(newLoader, services, '/channel/new');
    expect(loaded.types.source).toBe('relay');
    const values = loaded.types.options.map((o) => o.value);
    expect(new Set(values)).toEqual(SERVED);
    expect(values).not.toContain(UNSERVED);
    // Known types keep CHANNEL_TYPES' order and labels.
    const order = CHANNEL_TYPES.map((t) => t.value).filter((v) => SERVED.has(v));
    expect(values.slice(0, order.length)).toEqual(order);
    expect(loaded.types.options.find((o) => o.value === 37)?.label).toBe('Dify');
    expect(loaded.types.options.find((o) => o.value === 11)?.label).toBe('Google PaLM2');
  });

  it('the real relay serves every type of the catalogue (seed 000 §3), so the form offers them all', async () => {
    const real = createRelayClient(stack.relays[0]!.grpcAddress, {
      internalSecret: SECRET,
      timeoutMs: 10_000,
    });
    try {
      const served = new Set((await real.listChannelTypes()).map((t) => t.type));
      const missing = CHANNEL_TYPES.map((t) => t.value).filter((v) => !served.has(v));
      expect(missing).toEqual([]);
    } finally {
      real.close();
    }
  });

  it('the edit form keeps the saved type of a channel the relay no longer serves', async () => {
    const { id } = await seedChannel(stack, { type: UNSERVED, baseUrl: '', models: ['m'], name: 'legacy' });
    const loaded = await page(editLoader, services, `/channel/${id}/edit`, { id: String(id) });
    const values = loaded.types.options.map((o) => o.value);
    expect(values).toContain(UNSERVED);
    expect(values.filter((v) => v !== UNSERVED).every((v) => SERVED.has(v))).toBe(true);
  });

  // A validation refusal (InputError, status 400 inside) answers HTTP 200 + success false, the API's contract with
  // new-api clients (envelope.server.ts); the message is the admin's language and names the field.
  it('POST refuses an unserved type in the envelope, in the admin language; a served type is created', async () => {
    const refused = await post(services, {
      name: 'aws',
      type: UNSERVED,
      key: 'ak|sk|us-east-1',
      models: 'm',
    });
    expect(refused.status).toBe(200);
    expect(refused.body).toMatchObject({
      success: false,
      message: `The relay does not serve channel type ${UNSERVED}: choose another type`,
      data: { fieldErrors: { type: [] } },
    });
    expect(await stack.sql(`select id from channels where name = 'aws'`)).toEqual([]);
    const created = await post(services, { name: 'dify-app', type: 37, key: 'app-x', models: 'dify' });
    expect(created.body.success).toBe(true);
  });

  it('PUT refuses changing a channel to an unserved type, but edits of a legacy channel keep working', async () => {
    const { id } = await seedChannel(stack, { type: 1, baseUrl: '', models: ['m'], name: 'to-change' });
    const refused = await post(services, { id, type: UNSERVED }, 'PUT');
    expect(refused.status).toBe(200);
    expect(refused.body.success).toBe(false);
    expect(refused.body.message).toContain(`channel type ${UNSERVED}`);
    const legacy = await seedChannel(stack, { type: UNSERVED, baseUrl: '', models: ['m'], name: 'legacy-2' });
    const renamed = await post(services, { id: legacy.id, type: UNSERVED, name: 'legacy-renamed' }, 'PUT');
    expect(renamed.body.success).toBe(true);
    expect(renamed.body.data.name).toBe('legacy-renamed');
  });

  it('relay unreachable and nothing cached: every labelled type, flagged; saving is not blocked by the list', async () => {
    const loaded = await page(newLoader, downServices, '/channel/new');
    expect(loaded.types.source).toBe('unavailable');
    expect(loaded.types.options.map((o) => o.value)).toEqual(CHANNEL_TYPES.map((t) => t.value));
    const created = await post(downServices, {
      name: 'aws-offline',
      type: UNSERVED,
      key: 'ak|sk|us-east-1',
      models: 'm',
    });
    expect(created.body.success).toBe(true);
    // An unknown type is still refused by the catalogue check.
    const bogus = await post(downServices, { name: 'bogus', type: 999, key: 'k', models: 'm' });
    expect(bogus.body.success).toBe(false);
    expect(bogus.body.message).toBe('Unsupported channel type');
  });
});

describe('servedChannelTypes cache', () => {
  function fakeRelay(answers: (ServedChannelType[] | Error)[]): RelayClient & { calls: number } {
    const r = {
      address: 'fake:1',
      calls: 0,
      async listChannelTypes() {
        const a = answers[Math.min(r.calls++, answers.length - 1)]!;
        if (a instanceof Error) throw a;
        return a;
      },
    };
    return r as unknown as RelayClient & { calls: number };
  }

  it('asks once per CACHE_MS, then serves the last answer as stale while the relay is down', async () => {
    const r = fakeRelay([
      [
        { type: 1, servedBy: 'openai' },
        { type: 99, servedBy: 'new' },
      ],
      new Error('down'),
    ]);
    const t0 = 1_000_000;
    expect(await servedChannelTypes({ relay: r }, t0)).toEqual({ served: new Set([1, 99]), source: 'relay' });
    await servedChannelTypes({ relay: r }, t0 + CACHE_MS - 1);
    expect(r.calls).toBe(1);
    expect(await servedChannelTypes({ relay: r }, t0 + CACHE_MS)).toEqual({
      served: new Set([1, 99]),
      source: 'stale',
    });
    expect(r.calls).toBe(2);
  });

  it('a type the console has no label for yet is offered as #id after the known ones', () => {
    expect(typeOptions([99, 24, 1])).toEqual([
      { value: 1, label: 'OpenAI' },
      { value: 24, label: 'Google Gemini' },
      { value: 99, label: '#99' },
    ]);
  });

  it('no relay configured: unavailable', async () => {
    expect(await servedChannelTypes({ relay: null })).toEqual({ served: null, source: 'unavailable' });
  });
});

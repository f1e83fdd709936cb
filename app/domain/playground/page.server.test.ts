/**
 * The /playground page through its loader and action (no JavaScript) against a real relay (in-process, real
 * gRPC) in front of the fake OpenAI upstream, with Billing writing the log rows to PostgreSQL: the left panel's
 * groups and models, one turn with the full reply (billed to the user, logged as playground-<group>), the
 * conversation carried in the hidden field, clear context, switching group, bad input (400) and a model the relay
 * has no channel for (the reply marked error with the relay's message).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createRelayClient, type RelayClient } from '#app/grpc/relay-client.server.ts';
import { action, loader } from '#app/routes/playground.tsx';
import type { ConsoleServices } from '#app/services.server.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../../../tests/fakes/openai-upstream.ts';
import { consoleServices, signedInUser, type Who } from '../../../tests/integration/console-harness.ts';
import {
  drained,
  type Stack,
  seedChannel,
  setOptions,
  startStack,
} from '../../../tests/integration/relay-stack.ts';
import { MAX_HISTORY_MESSAGES, PLAYGROUND_DEFAULT_SYSTEM } from './constants.ts';
import { historyFromForm } from './page.server.ts';

const SECRET = 'playground-page-secret-0123456789abcdef';

let stack: Stack;
let fake: FakeOpenAI;
let relay: RelayClient;
let services: ConsoleServices;
let user: Who;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  stack = await startStack({ suffix: 'playground_page', env: { INTERNAL_API_SECRET: SECRET } });
  await seedChannel(stack, { baseUrl: fake.url, models: ['pgp-m'], groups: ['default', 'vip'] });
  await seedChannel(stack, { baseUrl: fake.url, models: ['gpt-4o-mini'], groups: ['vip'] });
  // A stale route: the console still lists the model, the relay (channel disabled) has no channel for it.
  const stale = await seedChannel(stack, { baseUrl: fake.url, models: ['pgp-stale'], status: 2 });
  await stack.sql(`update abilities set enabled = true where channel_id = ?`, [stale.id]);
  await setOptions(stack, {
    ModelRatio: JSON.stringify({ 'pgp-m': 1, 'gpt-4o-mini': 1, 'pgp-stale': 1 }),
    GroupRatio: JSON.stringify({ default: 1, vip: 1, svip: 1 }),
    UserUsableGroups: JSON.stringify({ default: 'Default', vip: 'VIP' }),
  });
  relay = createRelayClient(stack.relays[0]!.grpcAddress, { internalSecret: SECRET, timeoutMs: 20_000 });
  services = consoleServices(stack, relay);
  user = await signedInUser(stack, { quota: 10_000_000 });
}, 60_000);

afterAll(async () => {
  relay?.close();
  await stack?.close();
  await fake?.close();
});

beforeEach(() => fake.reset());

type Reply = { data: Record<string, unknown>; init?: ResponseInit | null };

function req(who: Who, form?: Record<string, string>, query = '') {
  const headers = new Headers({ 'Accept-Language': 'en', Cookie: `sy_session=${who.session}` });
  return new Request(`http://localhost/playground${query}`, {
    method: form ? 'POST' : 'GET',
    headers,
    body: form ? new URLSearchParams(form) : undefined,
  });
}
const args = (request: Request) => ({ request, params: {}, context: { services } as never });
const post = async (form: Record<string, string>) =>
  (await action(args(req(user, form)))) as unknown as Reply;

const SETTINGS = {
  group: 'default',
  model: 'pgp-m',
  temperature: '0.3',
  max_tokens: '0',
  system: 'Be brief.',
};

async function logsOf(userId: number) {
  await drained(stack);
  return stack.sql<{ token_name: string; model_name: string; quota: number }>(
    `select token_name, model_name, quota from logs where user_id = ? and type = 2 order by id`,
    [userId],
  );
}

describe('GET /playground', () => {
  it("offers the user's groups (own first) with each group's models, gpt-4o-mini by default when served", async () => {
    const page = (await loader(args(req(user)))) as unknown as Reply;
    const { options, userId, expired } = page.data as {
      options: {
        groups: { name: string }[];
        models: Record<string, string[]>;
        defaults: Record<string, unknown>;
      };
      userId: number;
      expired: boolean;
    };
    expect(userId).toBe(user.id);
    expect(expired).toBe(false);
    expect(options.groups.map((g) => g.name)).toEqual(['default', 'vip']);
    expect(options.models).toEqual({ default: ['pgp-m', 'pgp-stale'], vip: ['gpt-4o-mini', 'pgp-m'] });
    expect(options.defaults).toEqual({
      group: 'default',
      model: 'pgp-m',
      temperature: 0.7,
      max_tokens: 0,
      system: PLAYGROUND_DEFAULT_SYSTEM,
    });
    const flagged = (await loader(args(req(user, undefined, '?expired=1')))) as unknown as Reply;
    expect(flagged.data.expired).toBe(true);
  });

  it('sends a visitor to the login page', async () => {
    const anon = new Request('http://localhost/playground');
    const res = await loader(args(anon)).catch((e: unknown) => e);
    expect(res).toBeInstanceOf(Response);
    expect((res as Response).status).toBe(302);
    expect((res as Response).headers.get('Location')).toMatch(/^\/login/);
  });
});

describe('POST /playground (no JavaScript)', () => {
  it('answers the whole conversation with the full reply, billed and logged as playground-<group>', async () => {
    const before = await logsOf(user.id);
    const reply = await post({ ...SETTINGS, intent: 'send', question: 'hello there', history: '[]' });
    expect(reply.init?.status ?? 200).toBe(200);
    expect(reply.data).toMatchObject({
      error: null,
      question: '',
      settings: { group: 'default', model: 'pgp-m', temperature: 0.3, max_tokens: 0, system: 'Be brief.' },
      conversation: [
        { role: 'user', content: 'hello there' },
        { role: 'assistant', content: 'Hello from pgp-m', status: 'complete' },
      ],
    });
    const sent = fake.requests.at(-1)?.body ?? {};
    expect(sent).toMatchObject({
      model: 'pgp-m',
      temperature: 0.3,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hello there' },
      ],
    });
    expect(sent).not.toHaveProperty('max_tokens');
    expect(sent.stream).not.toBe(true);
    const logs = await logsOf(user.id);
    expect(logs.length).toBe(before.length + 1);
    expect(logs.at(-1)).toMatchObject({ token_name: 'playground-default', model_name: 'pgp-m' });
    expect(Number(logs.at(-1)?.quota)).toBeGreaterThan(0);
  });

  it('carries the conversation in the hidden field: completed turns are context, a reply marked error is not', async () => {
    const history = JSON.stringify([
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'one', status: 'complete' },
      { role: 'user', content: 'second' },
      { role: 'assistant', content: 'boom', status: 'error' },
    ]);
    const reply = await post({
      ...SETTINGS,
      group: 'vip',
      model: 'gpt-4o-mini',
      max_tokens: '50',
      intent: 'send',
      question: 'third',
      history,
    });
    expect((reply.data.conversation as unknown[]).length).toBe(6);
    expect(fake.requests.at(-1)?.body).toMatchObject({
      model: 'gpt-4o-mini',
      max_tokens: 50,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'one' },
        { role: 'user', content: 'second' },
        { role: 'user', content: 'third' },
      ],
    });
    expect((await logsOf(user.id)).at(-1)?.token_name).toBe('playground-vip');
  });

  it('shows a model the relay has no channel for as the reply marked error, with HTTP 200', async () => {
    const reply = await post({
      ...SETTINGS,
      model: 'pgp-stale',
      intent: 'send',
      question: 'hi',
      history: '[]',
    });
    expect(reply.init?.status ?? 200).toBe(200);
    expect(reply.data.conversation).toEqual([
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: 'no available channel for model pgp-stale in group default',
        status: 'error',
      },
    ]);
    expect(reply.data.error).toBe('no available channel for model pgp-stale in group default');
    expect(fake.requests).toHaveLength(0);
  });

  it('clears the context, lists another group’s models, and refuses bad input with 400', async () => {
    const history = JSON.stringify([
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b', status: 'complete' },
    ]);
    const cleared = await post({ ...SETTINGS, intent: 'clear', history });
    expect(cleared.data).toMatchObject({ conversation: [], error: null, settings: { model: 'pgp-m' } });

    // The model stays when the new group serves it, else the group's default (gpt-4o-mini there).
    const kept = await post({ ...SETTINGS, group: 'vip', intent: 'group', question: 'kept', history });
    expect(kept.data).toMatchObject({
      settings: { group: 'vip', model: 'pgp-m' },
      question: 'kept',
      conversation: [{ content: 'a' }, { content: 'b' }],
    });
    const switched = await post({ ...SETTINGS, model: 'pgp-stale', group: 'vip', intent: 'group' });
    expect(switched.data).toMatchObject({ settings: { group: 'vip', model: 'gpt-4o-mini' } });

    const empty = await post({ ...SETTINGS, intent: 'send', question: '   ', history });
    expect(empty.init?.status).toBe(400);
    expect(empty.data.error).toBe('Please enter a message');
    const long = await post({ ...SETTINGS, intent: 'send', question: 'x'.repeat(8001), history });
    expect(long.init?.status).toBe(400);
    expect(long.data.error).toMatch(/too long/);
    const unknown = await post({ ...SETTINGS, intent: 'drop', question: 'x' });
    expect(unknown.init?.status).toBe(400);

    // A group without models: nothing to ask.
    const lonely = await signedInUser(stack, { quota: 1_000_000, group: 'lonely' });
    const none = (await action(
      args(req(lonely, { group: 'lonely', intent: 'send', question: 'hi' })),
    )) as unknown as Reply;
    expect(none.init?.status).toBe(400);
    expect(none.data).toMatchObject({
      error: 'Please choose a model',
      question: 'hi',
      settings: { model: '' },
    });

    // A group the user may not use, a model outside the group, a temperature out of range: the defaults.
    const odd = await post({
      group: 'svip',
      model: 'nope',
      temperature: '9',
      max_tokens: '-3',
      intent: 'group',
    });
    expect(odd.data.settings).toMatchObject({
      group: 'default',
      model: 'pgp-m',
      temperature: 1,
      max_tokens: 0,
    });
    expect(fake.requests).toHaveLength(0);
  });
});

describe('historyFromForm', () => {
  const form = (history: string) => {
    const f = new FormData();
    f.set('history', history);
    return f;
  };
  it('keeps well-formed messages, bounded, and ignores anything else', () => {
    expect(historyFromForm(form('not json'))).toEqual([]);
    expect(historyFromForm(form('{"role":"user"}'))).toEqual([]);
    expect(
      historyFromForm(
        form(
          JSON.stringify([
            { role: 'system', content: 'x' },
            { role: 'user', content: 3 },
            { role: 'user', content: 'ok' },
          ]),
        ),
      ),
    ).toEqual([{ role: 'user', content: 'ok' }]);
    const many = Array.from({ length: 100 }, (_, i) => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: `m${i}`,
      status: 'complete',
    }));
    const kept = historyFromForm(form(JSON.stringify(many)));
    expect(kept.length).toBeLessThanOrEqual(MAX_HISTORY_MESSAGES);
    expect(kept[0]?.role).toBe('user');
    expect(kept.at(-1)?.content).toBe('m99');
    const huge = historyFromForm(
      form(
        JSON.stringify([
          { role: 'user', content: 'y'.repeat(20_000) },
          { role: 'assistant', content: 'z', status: 'weird' },
        ]),
      ),
    );
    expect(huge).toEqual([
      { role: 'user', content: 'y'.repeat(8_000) },
      { role: 'assistant', content: 'z', status: 'complete' },
    ]);
  });
});

/**
 * RELAY_UPSTREAM_TIMEOUT_MS: a whole non-stream reply and a stream's first byte must arrive within it; after
 * that it bounds the gaps between chunks (the per-stream idle timer), not the stream's length.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';
import { drained, reload, type Stack, seedChannel, seedToken, seedUser, startStack } from './relay-stack.ts';

let stack: Stack;
let fake: FakeOpenAI;
let url: string;
let key: string;
let userId: number;
/** Answers 200 with the start of a JSON body, then never finishes it. */
let stalling: Server;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  stack = await startStack({ suffix: 'relay_timeouts', env: { RELAY_UPSTREAM_TIMEOUT_MS: '400' } });
  userId = (await seedUser(stack, { quota: 10_000_000 })).id;
  key = (await seedToken(stack, userId, { remainQuota: 5_000_000 })).key;
  await seedChannel(stack, { baseUrl: fake.url, models: ['gpt-4o'] });
  stalling = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"id":"chatcmpl-stall","object":"chat.completion","choices":[');
  });
  await new Promise<void>((r) => stalling.listen(0, '127.0.0.1', r));
  await seedChannel(stack, {
    baseUrl: `http://127.0.0.1:${(stalling.address() as AddressInfo).port}`,
    models: ['gpt-4o-stall'],
  });
  await stack.sql(
    `insert into options (key, value) values ('ModelRatio', '{"gpt-4o":1.25,"gpt-4o-stall":1.25}')`,
  );
  await reload(stack);
  url = `${stack.relays[0]!.httpUrl}/v1/chat/completions`;
}, 60_000);

afterAll(async () => {
  stalling?.closeAllConnections();
  stalling?.close();
  await stack?.close();
  await fake?.close();
});

const post = (stream: boolean, model = 'gpt-4o') =>
  fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'hi there' }] }),
  });

const logCount = async () => {
  await drained(stack);
  return (
    await stack.sql<{ n: number }>('select count(*)::int as n from logs where user_id = ?', [userId])
  )[0]!.n;
};

it('a non-stream reply slower than the deadline is a 502 "did not answer in time", nothing billed', async () => {
  const before = await logCount();
  fake.on({ respond: { delayMs: 700 }, times: 1 });
  const slow = await post(false);
  expect(slow.status).toBe(502);
  expect(await slow.text()).toContain('did not answer in time');
  expect(await logCount()).toBe(before);
});

it('a non-stream reply whose body stops after its headers is a 502 "did not answer in time", not a 500', async () => {
  const before = await logCount();
  const stalled = await post(false, 'gpt-4o-stall');
  expect(stalled.status).toBe(502);
  expect(await stalled.json()).toMatchObject({
    error: { message: expect.stringContaining('did not answer in time'), code: 'upstream_unreachable' },
  });
  expect(await logCount()).toBe(before);
});

it('a stream longer in total than the deadline completes when every gap is shorter', async () => {
  // 8 chunks 150 ms apart: about 1.2 s in total against a 400 ms deadline.
  fake.on({ respond: { content: 'one two three four five six seven eight', streamDelayMs: 150 }, times: 1 });
  const started = Date.now();
  const text = await (await post(true)).text();
  expect(Date.now() - started).toBeGreaterThan(800);
  expect(text).toContain('eight');
  expect(text.trim().endsWith('data: [DONE]')).toBe(true);
});

it('a gap longer than the deadline cuts the stream (no [DONE]) and bills what was produced', async () => {
  const before = await logCount();
  fake.on({ respond: { streamDelayMs: 900 }, times: 1 });
  const started = Date.now();
  const text = await (await post(true)).text();
  expect(text).not.toContain('[DONE]');
  expect(Date.now() - started).toBeLessThan(900 + 400);
  expect(await logCount()).toBe(before + 1);
});

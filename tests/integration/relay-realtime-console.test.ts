/**
 * Realtime through the console's port (the single origin of `npm start`): the console forwards the WebSocket
 * upgrade on /v1/realtime to the relay, so the handshake's answer (the selected subprotocol, or a refusal in
 * OpenAI's envelope) and every frame reach the client unchanged, and the response is billed by the relay.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunningConsole } from '../../server/console.ts';
import { type FakeRealtime, startFakeRealtime } from '../fakes/openai-realtime-upstream.ts';
import { openRealtime, refusedHandshake } from '../fakes/realtime-client.ts';
import { startForwardingConsole } from './console-harness.ts';
import {
  drained,
  type Stack,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from './relay-stack.ts';

let fake: FakeRealtime;
let stack: Stack;
let console_: RunningConsole;

beforeAll(async () => {
  fake = await startFakeRealtime();
  stack = await startStack({ suffix: 'console_realtime' });
  await seedChannel(stack, { baseUrl: fake.url, models: ['gpt-realtime'] });
  await setOptions(stack, {
    ModelRatio: '{"gpt-realtime":2}',
    CompletionRatio: '{"gpt-realtime":4}',
    AudioRatio: '{"gpt-realtime":16}',
    AudioCompletionRatio: '{"gpt-realtime":2}',
  });
  console_ = await startForwardingConsole(stack);
}, 120_000);

afterAll(async () => {
  await console_?.stop();
  await stack?.close();
  await fake?.close();
});

it('a realtime session opened on the console port reaches the relay and is billed per response', async () => {
  const user = await seedUser(stack, { quota: 1_000_000 });
  const token = await seedToken(stack, user.id, { remainQuota: 1_000_000 });
  const url = `${console_.url.replace('http', 'ws')}/v1/realtime?model=gpt-realtime`;

  const refused = await refusedHandshake(url, {
    protocols: ['realtime', 'openai-insecure-api-key.sk-wrong'],
  });
  expect(refused.status).toBe(401);
  expect(refused.body.error?.code).toBe('invalid_api_key');

  const c = await openRealtime(url, { protocols: ['realtime', `openai-insecure-api-key.sk-${token.key}`] });
  expect(c.ws.protocol).toBe('realtime');
  await c.waitFor('session.created');
  fake.next({ text: 'through the console', usage: { textIn: 10, audioIn: 20, textOut: 2, audioOut: 30 } });
  c.send({ type: 'response.create' });
  await c.waitFor('response.done');
  c.ws.send(new Uint8Array([9, 8, 7]));
  for (let i = 0; i < 50 && !c.events.some((e) => 'binary' in e); i++)
    await new Promise((r) => setTimeout(r, 20));
  expect([...((c.events.find((e) => 'binary' in e) as { binary: Uint8Array }).binary ?? [])]).toEqual([
    9, 8, 7,
  ]);
  c.ws.close();
  await c.closed;

  await drained(stack);
  const rows = await stack.sql<{ quota: number }>(
    `select quota::int as quota from logs where user_id = ? and type = 2`,
    [user.id],
  );
  // (10 + 2·4 + 20·16 + 30·16·2)·2
  expect(rows.map((r) => r.quota)).toEqual([2596]);
});

/**
 * A stream cut by its client while it goes through the console's forwarding (the single origin of `npm start`):
 * the console must pass the cut on to the relay, which then stops reading the upstream, bills what was
 * delivered and gives the hold back at once (issue 13, item 5: through :3000, cut streams were billed only when
 * the upstream finished, if ever, and their holds lingered).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunningConsole } from '../../server/console.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';
import { startForwardingConsole } from './console-harness.ts';
import { type Stack, seedChannel, seedToken, seedUser, setOptions, startStack } from './relay-stack.ts';

const MODEL = 'gpt-4o';
const WORDS = 100;
const STREAM_DELAY_MS = 150;

let fake: FakeOpenAI;
let stack: Stack;
let console_: RunningConsole;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  fake = await startFakeOpenAI();
  // 100 chunks 150 ms apart: the whole stream lasts 15 s, far longer than the test waits for the bill.
  fake.on({
    model: MODEL,
    respond: {
      content: Array.from({ length: WORDS }, () => 'story').join(' '),
      streamDelayMs: STREAM_DELAY_MS,
    },
  });
  stack = await startStack({ suffix: 'console_cut' });
  await seedChannel(stack, { baseUrl: fake.url, models: [MODEL] });
  await setOptions(stack, {
    ModelRatio: JSON.stringify({ [MODEL]: 1 }),
    CompletionRatio: JSON.stringify({ [MODEL]: 1 }),
    RetryTimes: '0',
  });
  console_ = await startForwardingConsole(stack);
}, 120_000);

afterAll(async () => {
  await console_?.stop();
  await stack?.close();
  await fake?.close();
});

it('a client that cuts a stream through the console is billed for what it got, within seconds', async () => {
  const user = await seedUser(stack, { quota: 10_000_000 });
  const token = await seedToken(stack, user.id, { remainQuota: 5_000_000 });
  const ac = new AbortController();
  const started = Date.now();
  const res = await fetch(`${console_.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer sk-${token.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: MODEL,
      stream: true,
      max_tokens: 2_000,
      messages: [{ role: 'user', content: 'Tell me a long story.' }],
    }),
    signal: ac.signal,
  });
  expect(res.status).toBe(200);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let seen = '';
  while ((seen.match(/"content":"[^"]/g) ?? []).length < 3) {
    const { done, value } = await reader.read();
    if (done) break;
    seen += value;
  }
  ac.abort();

  let rows: { quota: string; completion_tokens: number }[] = [];
  for (let i = 0; i < 100 && rows.length === 0; i++) {
    await sleep(50);
    rows = await stack.sql(`select quota, completion_tokens from logs where type = 2 and user_id = ?`, [
      user.id,
    ]);
  }
  // Billed while the upstream would still be streaming, for the part delivered, not the whole story.
  expect(rows).toHaveLength(1);
  expect(Date.now() - started).toBeLessThan((WORDS * STREAM_DELAY_MS) / 2);
  expect(rows[0]!.completion_tokens).toBeGreaterThanOrEqual(3);
  expect(rows[0]!.completion_tokens).toBeLessThan(WORDS / 2);
  // The hold is gone: the committed balance is the cost of the log row and nothing is left pending.
  const [u] = await stack.sql<{ quota: string }>('select quota from users where id = ?', [user.id]);
  expect(10_000_000 - Number(u!.quota)).toBe(Number(rows[0]!.quota));
  expect(await stack.relays[0]!.store.balance({ kind: 'user', id: user.id })).toBe(Number(u!.quota));
});

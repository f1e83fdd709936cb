/**
 * The pricing page and the relay's bill agree: an admin sets ratios through the modelTab domain (OptionService),
 * the relay reloads them, a real call through the relay to the fake upstream is billed by Billing, and the quota
 * in the log row equals prompt × (page's input quota per 1M) + completion × (page's output quota per 1M).
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../../../tests/fakes/openai-upstream.ts';
import {
  drained,
  reload,
  type Stack,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from '../../../tests/integration/relay-stack.ts';
import { batchSet, saveModel } from './model-tab.server.ts';
import { pricingPage } from './pricing.server.ts';

let stack: Stack;
let fake: FakeOpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  stack = await startStack({ suffix: 'pricing_billing' });
  await setOptions(stack, {
    GroupRatio: JSON.stringify({ default: 1, vip: 2 }),
    UserUsableGroups: JSON.stringify({ default: 'default', vip: 'vip' }),
    ModelRatio: '{}',
    CompletionRatio: '{}',
    ModelPrice: '{}',
  });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await fake?.close();
});

const t = ((key: string) => key) as never;

describe('pricing agrees with billing', () => {
  it('bills a ratio-priced and a per-call model exactly as the page prices them for the vip group', async () => {
    await seedChannel(stack, { baseUrl: fake.url, models: ['priced-chat', 'dall-e-3'], groups: ['vip'] });
    const admin = await seedUser(stack, { quota: 0, role: 10 });
    const ctx = {
      em: stack.orm.em.fork(),
      options: stack.options,
      actor: { id: admin.id, username: admin.username, displayName: '', role: 10, group: 'default' },
      t,
      ip: '127.0.0.1',
    };
    await saveModel(ctx, { name: 'priced-chat', ratio: '1.5', completion: '3' });
    await batchSet(ctx, { models: ['dall-e-3'], mode: 'price', value: '0.04' });
    await reload(stack);

    const user = await seedUser(stack, { quota: 100_000_000, group: 'vip' });
    const token = await seedToken(stack, user.id, { unlimited: true });
    const page = await pricingPage(
      {
        em: stack.orm.em.fork(),
        options: stack.options,
        actor: { id: user.id, username: user.username, displayName: '', role: 1, group: 'vip' },
      },
      {},
    );
    const chat = page.rows.find((r) => r.model_name === 'priced-chat');
    const image = page.rows.find((r) => r.model_name === 'dall-e-3');
    // 1M input tokens: 1e6 × 1.5 × 2 = 3,000,000 quota = $6; output × completion ratio 3 = $18; per call 0.04 × 2.
    expect(chat).toMatchObject({ inputQuota: 3_000_000, outputQuota: 9_000_000, inputUsd: 6, outputUsd: 18 });
    expect(image).toMatchObject({ quota_type: 1, callQuota: 40_000, callUsd: 0.08 });

    const client = new OpenAI({
      baseURL: `${stack.relays[0]!.httpUrl}/v1`,
      apiKey: `sk-${token.key}`,
      maxRetries: 0,
    });
    fake.on({ model: 'priced-chat', respond: { usage: { prompt_tokens: 1000, completion_tokens: 500 } } });
    await client.chat.completions.create({
      model: 'priced-chat',
      messages: [{ role: 'user', content: 'hi' }],
    });
    await client.images.generate({ model: 'dall-e-3', prompt: 'a cat' });
    await drained(stack);
    const logs = await stack.sql<{ model_name: string; quota: string }>(
      `select model_name, quota from logs where user_id = ? and type = 2 order by id`,
      [user.id],
    );
    const billed = Object.fromEntries(logs.map((l) => [l.model_name, Number(l.quota)]));
    expect(billed['priced-chat']).toBe((1000 * chat!.inputQuota + 500 * chat!.outputQuota) / 1_000_000);
    expect(billed['priced-chat']).toBe(7500);
    expect(billed['dall-e-3']).toBe(image!.callQuota);
  });
});

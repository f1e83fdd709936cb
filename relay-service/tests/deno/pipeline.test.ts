/**
 * The relay pipeline under Deno (`npm run test:deno`): the official openai SDK calls a relay running on Deno
 * (Deno.serve, MikroORM on PostgreSQL, the Redis store) in front of the fake upstream, and the usage reaches
 * the console's Billing gRPC and PostgreSQL exactly as on Node.
 */
import OpenAI from 'openai';
import { startFakeOpenAI } from '../../../tests/fakes/openai-upstream.ts';
import {
  drained,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from '../../../tests/integration/relay-stack.ts';

declare const Deno: {
  test(def: {
    name: string;
    sanitizeOps?: boolean;
    sanitizeResources?: boolean;
    fn: () => Promise<void>;
  }): void;
};

function assertEquals<T>(actual: T, expected: T, what: string): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected))
    throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

Deno.test({
  name: 'relay pipeline on Deno: openai SDK chat (plain and streamed) billed once in PostgreSQL via Billing gRPC',
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const fake = await startFakeOpenAI();
    const stack = await startStack({ suffix: 'deno_pipeline', redis: true });
    try {
      const user = await seedUser(stack, { quota: 1_000_000 });
      const token = await seedToken(stack, user.id, { remainQuota: 500_000 });
      await seedChannel(stack, { baseUrl: fake.url, models: ['gpt-4o'] });
      await setOptions(stack, { ModelRatio: '{"gpt-4o":1.25}', CompletionRatio: '{"gpt-4o":4}' });
      fake.on({ model: 'gpt-4o', respond: { usage: { prompt_tokens: 1000, completion_tokens: 500 } } });

      const client = new OpenAI({
        baseURL: `${stack.relays[0]!.httpUrl}/v1`,
        apiKey: `sk-${token.key}`,
        maxRetries: 0,
      });
      const res = await client.chat.completions.create({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'hi' }],
      });
      assertEquals(res.choices[0]?.message.content, 'Hello from gpt-4o', 'content');
      const stream = await client.chat.completions.create({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      assertEquals(text, 'Hello from gpt-4o', 'streamed content');

      await drained(stack);
      const [u] = await stack.sql<{ quota: string; used_quota: string }>(
        `select quota, used_quota from users where id = ?`,
        [user.id],
      );
      // Two calls of (1000 + 500·4)·1.25 = 3750 each.
      assertEquals(Number(u?.used_quota), 7500, 'used quota');
      assertEquals(Number(u?.quota), 1_000_000 - 7500, 'quota');
      const logs = await stack.sql<{ n: string }>(
        `select count(*) as n from logs where user_id = ? and type = 2`,
        [user.id],
      );
      assertEquals(Number(logs[0]?.n), 2, 'consume log rows');
    } finally {
      await stack.close();
      await fake.close();
    }
  },
});

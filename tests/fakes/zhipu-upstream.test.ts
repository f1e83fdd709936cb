/** The fake checks Zhipu's JWT as Zhipu does (jose: signature, sign_type, millisecond exp); driven by the adaptor. */
import { SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { channel, relayInput, runStream } from '../../relay-service/src/providers/testing.ts';
import type { UpstreamRequest } from '../../relay-service/src/providers/types.ts';
import { createZhipuAdaptor } from '../../relay-service/src/providers/zhipu/adaptor.ts';
import { type FakeZhipu, startFakeZhipu } from './zhipu-upstream.ts';

let fake: FakeZhipu;
const adaptor = createZhipuAdaptor();

beforeAll(async () => {
  fake = await startFakeZhipu({ keys: ['keyid01.goodsecret'] });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const send = (req: UpstreamRequest) =>
  fetch(req.url, { method: req.method, headers: req.headers, body: req.body as string | null });
const input = relayInput({
  upstreamModel: 'chatglm_turbo',
  body: { messages: [{ role: 'user', content: 'hello zhipu' }] },
});

async function withAuth(auth: string | null): Promise<unknown> {
  const req = await adaptor.buildRequest(channel({ key: 'keyid01.goodsecret', baseUrl: fake.url }), input);
  if (auth === null) req.headers.delete('authorization');
  else req.headers.set('authorization', auth);
  return (await send(req)).json();
}

const sign = (
  claims: Record<string, unknown>,
  secret = 'goodsecret',
  header = { alg: 'HS256', sign_type: 'SIGN' },
) => new SignJWT(claims).setProtectedHeader(header).sign(new TextEncoder().encode(secret));

describe('fake Zhipu v3 upstream', () => {
  it('accepts the adaptor’s signed token and answers the v3 envelope (content JSON-quoted)', async () => {
    const ch = channel({ type: 16, key: 'keyid01.goodsecret', baseUrl: fake.url });
    const res = await send(await adaptor.buildRequest(ch, input));
    const raw = await res.clone().json();
    expect(raw).toMatchObject({
      code: 200,
      success: true,
      data: { choices: [{ content: '"Hello from chatglm_turbo"' }] },
    });
    const parsed = adaptor.parseResponse(input, {
      status: 200,
      headers: res.headers,
      body: new Uint8Array(await res.arrayBuffer()),
    });
    expect(JSON.parse(String(parsed.body)).choices[0].message.content).toBe('Hello from chatglm_turbo');
    expect(parsed.usage).toMatchObject({ promptTokens: 2, completionTokens: 3 });
    expect(fake.requests.at(-1)?.claims).toMatchObject({ api_key: 'keyid01' });
  });

  it('refuses a missing header, a Bearer prefix, a wrong secret, a missing sign_type and exp in seconds', async () => {
    const now = Date.now();
    expect(await withAuth(null)).toMatchObject({ code: 1001, success: false });
    const good = await sign({ api_key: 'keyid01', exp: now + 60_000, timestamp: now });
    expect(await withAuth(`Bearer ${good}`)).toMatchObject({ code: 1002, success: false });
    expect(
      await withAuth(await sign({ api_key: 'keyid01', exp: now + 60_000, timestamp: now }, 'badsecret')),
    ).toMatchObject({
      code: 1004,
    });
    expect(
      await withAuth(
        await sign({ api_key: 'keyid01', exp: now + 60_000, timestamp: now }, 'goodsecret', {
          alg: 'HS256',
        } as never),
      ),
    ).toMatchObject({
      code: 1002,
    });
    expect(
      await withAuth(await sign({ api_key: 'keyid01', exp: Math.floor(now / 1000) + 60, timestamp: now })),
    ).toMatchObject({
      code: 1003,
    });
    expect(
      await withAuth(await sign({ api_key: 'unknown', exp: now + 60_000, timestamp: now })),
    ).toMatchObject({ code: 1004 });
    expect(await withAuth(good)).toMatchObject({ code: 200, success: true });
  });

  it('streams add events (multi-line text as several data lines) and finish with meta usage', async () => {
    fake.on({ respond: { content: 'line one\nline two' } });
    const streamInput = { ...input, stream: true };
    const res = await send(
      await adaptor.buildRequest(channel({ key: 'keyid01.goodsecret', baseUrl: fake.url }), streamInput),
    );
    const bytes = new Uint8Array(await res.arrayBuffer());
    const raw = new TextDecoder().decode(bytes);
    expect(raw).toContain('event: add\ndata: one\ndata: \n\n');
    expect(raw).toMatch(
      /event: finish\ndata: \nmeta: \{"task_status":"SUCCESS","usage":\{"prompt_tokens":2,"completion_tokens":4,"total_tokens":6\}/,
    );
    const { tally } = await runStream(adaptor.streamConversion(streamInput), [bytes]);
    expect(tally.completionText).toBe('line one\nline two');
    expect(tally.usage).toMatchObject({ promptTokens: 2, completionTokens: 4 });
  });
});

/** The fake recomputes Tencent's TC3 signature on its own and refuses what Tencent refuses; driven by the adaptor. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTencentAdaptor } from '../../relay-service/src/providers/tencent/adaptor.ts';
import { channel, relayInput, runStream } from '../../relay-service/src/providers/testing.ts';
import type { UpstreamRequest } from '../../relay-service/src/providers/types.ts';
import { type FakeTencent, startFakeTencent } from './tencent-upstream.ts';

let fake: FakeTencent;
const adaptor = createTencentAdaptor();

beforeAll(async () => {
  fake = await startFakeTencent({ keys: [['AKIDgood', 'goodSecretKey']] });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const send = (req: UpstreamRequest, body = req.body as string | null) =>
  fetch(req.url, { method: req.method, headers: req.headers, body });
const input = relayInput({
  upstreamModel: 'hunyuan-lite',
  body: {
    messages: [
      { role: 'system', content: 'be kind' },
      { role: 'user', content: 'hello hunyuan' },
    ],
  },
});
const ch = (key: string) => channel({ type: 23, key, baseUrl: fake.url });
const errorOf = async (res: Response) =>
  ((await res.json()) as { Response: { Error?: { Code: string } } }).Response.Error?.Code;

describe('fake Tencent Hunyuan upstream', () => {
  it('accepts the adaptor’s signature and answers ChatCompletions', async () => {
    const res = await send(adaptor.buildRequest(ch('1300000000|AKIDgood|goodSecretKey'), input));
    const parsed = adaptor.parseResponse(input, {
      status: res.status,
      headers: res.headers,
      body: new Uint8Array(await res.arrayBuffer()),
    });
    expect(JSON.parse(String(parsed.body)).choices[0].message.content).toBe('Hello from hunyuan-lite');
    expect(parsed.usage).toMatchObject({ promptTokens: 4, completionTokens: 3 });
    expect(fake.requests.at(-1)?.secretId).toBe('AKIDgood');
  });

  it('refuses a wrong secret, an unknown SecretId, a changed body and a stale timestamp, with HTTP 200', async () => {
    const wrong = await send(adaptor.buildRequest(ch('1300000000|AKIDgood|otherSecret'), input));
    expect(wrong.status).toBe(200);
    expect(await errorOf(wrong)).toBe('AuthFailure.SignatureFailure');
    expect(await errorOf(await send(adaptor.buildRequest(ch('1|AKIDunknown|goodSecretKey'), input)))).toBe(
      'AuthFailure.SecretIdNotFound',
    );
    const signed = adaptor.buildRequest(ch('1300000000|AKIDgood|goodSecretKey'), input);
    const tampered = String(signed.body).replace('hello hunyuan', 'hello tampered');
    expect(await errorOf(await send(signed, tampered))).toBe('AuthFailure.SignatureFailure');
    const stale = createTencentAdaptor(() => Date.now() - 10 * 60_000);
    expect(
      await errorOf(await send(stale.buildRequest(ch('1300000000|AKIDgood|goodSecretKey'), input))),
    ).toBe('AuthFailure.SignatureExpire');
    const missing = adaptor.buildRequest(ch('1300000000|AKIDgood|goodSecretKey'), input);
    missing.headers.delete('authorization');
    expect(await errorOf(await send(missing))).toBe('AuthFailure.InvalidAuthorization');
  });

  it('streams Delta frames with Usage that the adaptor converts; enforces the message order', async () => {
    const streamInput = { ...input, stream: true };
    const res = await send(adaptor.buildRequest(ch('1300000000|AKIDgood|goodSecretKey'), streamInput));
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const { tally } = await runStream(adaptor.streamConversion(streamInput), [
      new Uint8Array(await res.arrayBuffer()),
    ]);
    expect(tally.completionText).toBe('Hello from hunyuan-lite');
    expect(tally.usage).toMatchObject({ promptTokens: 4, completionTokens: 3 });
    const bad = relayInput({
      upstreamModel: 'hunyuan-lite',
      body: { messages: [{ role: 'assistant', content: 'me first' }] },
    });
    expect(
      await errorOf(await send(adaptor.buildRequest(ch('1300000000|AKIDgood|goodSecretKey'), bad))),
    ).toBe('InvalidParameter');
  });
});

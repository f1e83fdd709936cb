/** The fake speaks Wenxin's wire format and checks the access token as Baidu does; driven by the adaptor. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createBaiduAdaptor } from '../../relay-service/src/providers/baidu/adaptor.ts';
import { channel, relayInput, runStream } from '../../relay-service/src/providers/testing.ts';
import type { UpstreamRequest } from '../../relay-service/src/providers/types.ts';
import { type FakeBaidu, startFakeBaidu } from './baidu-upstream.ts';

let fake: FakeBaidu;
const adaptor = createBaiduAdaptor();

beforeAll(async () => {
  fake = await startFakeBaidu({ keys: [['ak-good', 'sk-good']] });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const send = (req: UpstreamRequest) =>
  fetch(req.url, { method: req.method, headers: req.headers, body: req.body as string | null });

async function token(key = 'ak-good|sk-good'): Promise<{ status: number; text: string }> {
  const res = await send(
    adaptor.credential!.request(channel({ key, baseUrl: fake.url }), Date.now()) as UpstreamRequest,
  );
  return { status: res.status, text: await res.text() };
}

describe('fake Baidu upstream', () => {
  it('issues an access token for a known key pair and refuses an unknown one as Baidu does', async () => {
    const good = await token();
    expect(good.status).toBe(200);
    const cred = adaptor.credential!.parse({ status: 200, bodyText: good.text }, 0);
    expect(cred.value).toMatch(/^24\./);
    expect(cred.expiresAtMs).toBe(2_592_000_000);

    const bad = await token('ak-good|sk-wrong');
    expect(bad.status).toBe(401);
    expect(JSON.parse(bad.text)).toEqual({ error: 'invalid_client', error_description: 'unknown client id' });
    expect(fake.requests.at(-1)?.query).toMatchObject({
      grant_type: 'client_credentials',
      client_id: 'ak-good',
    });
  });

  it('serves chat with the token; a wrong or revoked token gets error_code 110 with HTTP 200', async () => {
    const cred = adaptor.credential!.parse({ status: 200, bodyText: (await token()).text }, 0);
    const ch = channel({ type: 15, key: 'ak-good|sk-good', baseUrl: fake.url, credential: cred.value });
    const input = relayInput({
      upstreamModel: 'ERNIE-3.5-8K',
      body: {
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'hello there' },
        ],
      },
    });
    const res = await send(adaptor.buildRequest(ch, input));
    const parsed = adaptor.parseResponse(input, {
      status: res.status,
      headers: res.headers,
      body: new Uint8Array(await res.arrayBuffer()),
    });
    expect(JSON.parse(String(parsed.body)).choices[0].message.content).toBe('Hello from completions');
    expect(parsed.usage).toMatchObject({ promptTokens: 4, completionTokens: 3 });
    expect(fake.requests.at(-1)?.body).toMatchObject({ system: 'be brief', messages: [{ role: 'user' }] });

    const wrong = await send(adaptor.buildRequest({ ...ch, credential: '24.not-issued' }, input));
    expect(wrong.status).toBe(200);
    expect(await wrong.json()).toEqual({
      error_code: 110,
      error_msg: 'Access token invalid or no longer valid',
    });

    fake.revokeTokens();
    const revoked = await send(adaptor.buildRequest(ch, input));
    expect(await revoked.json()).toMatchObject({ error_code: 110 });
  });

  it('streams frames the adaptor converts; enforces Wenxin’s message rules', async () => {
    const cred = adaptor.credential!.parse({ status: 200, bodyText: (await token()).text }, 0);
    const ch = channel({ type: 15, key: 'ak-good|sk-good', baseUrl: fake.url, credential: cred.value });
    const input = relayInput({ upstreamModel: 'ERNIE-Speed-8K', stream: true });
    const res = await send(adaptor.buildRequest(ch, input));
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const { tally } = await runStream(adaptor.streamConversion(input), [
      new Uint8Array(await res.arrayBuffer()),
    ]);
    expect(tally.completionText).toBe('Hello from ernie_speed');
    expect(tally.usage).toMatchObject({ promptTokens: 1, completionTokens: 3 });

    const even = relayInput({
      upstreamModel: 'ERNIE-Speed-8K',
      body: {
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'b' },
        ],
      },
    });
    const refused = await send(adaptor.buildRequest(ch, even));
    expect(await refused.json()).toEqual({
      error_code: 336003,
      error_msg: 'the length of messages must be an odd number',
    });
  });
});

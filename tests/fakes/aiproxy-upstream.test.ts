/** The fake aiproxy.io library API against the adaptor: ask, stream, failures inside a 200, the balance. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAIProxyAdaptor } from '../../relay-service/src/providers/aiproxy/adaptor.ts';
import { channel, relayInput, runStream } from '../../relay-service/src/providers/testing.ts';
import type { UpstreamRequest } from '../../relay-service/src/providers/types.ts';
import { type FakeAIProxy, startFakeAIProxy } from './aiproxy-upstream.ts';

let fake: FakeAIProxy;
beforeAll(async () => {
  fake = await startFakeAIProxy({ keys: ['ap-good'], libraries: ['lib-1'], totalPoints: 42.5 });
});
afterAll(() => fake.close());

const adaptor = createAIProxyAdaptor();
const input = (stream = false) =>
  relayInput({
    upstreamModel: 'gpt-4o-mini',
    stream,
    body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'What?' }] },
  });
const send = async (req: UpstreamRequest) => {
  const res = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body });
  return { status: res.status, body: new Uint8Array(await res.arrayBuffer()) };
};
const ch = (key = 'ap-good', other = 'lib-1') => channel({ type: 21, key, other, baseUrl: fake.url });

describe('fake AI Proxy library', () => {
  it('answers a question citing documents', async () => {
    const res = await send(adaptor.buildRequest(ch(), input()));
    expect(res.status).toBe(200);
    const parsed = adaptor.parseResponse(input(), { status: 200, headers: new Headers(), body: res.body });
    expect(parsed.completionText).toMatch(/^Answer from lib-1: What\?\n\n参考文档：\n1\. \[Overview\]/);
  });

  it('streams word frames with the documents on the last', async () => {
    const res = await send(adaptor.buildRequest(ch(), input(true)));
    const { tally } = await runStream(adaptor.streamConversion(input(true)), [res.body]);
    expect(tally.completionText).toMatch(/^Answer from lib-1: What\?\n\n参考文档：\n1\. \[Overview\]/);
    expect(tally.completionText).toContain('\n2. [Channels](https://docs.example.com/channels)\n');
  });

  it('an unknown library fails inside a 200; a wrong key is 401', async () => {
    const res = await send(adaptor.buildRequest(ch('ap-good', 'lib-x'), input()));
    expect(res.status).toBe(200);
    expect(() =>
      adaptor.parseResponse(input(), { status: 200, headers: new Headers(), body: res.body }),
    ).toThrow('library not found');
    const denied = await send(adaptor.buildRequest(ch('ap-bad'), input()));
    expect(denied.status).toBe(401);
  });

  it('reports the balance to the right key only', async () => {
    const ok = await send(adaptor.balanceRequests!(ch())[0]!);
    expect(adaptor.parseBalance!([JSON.parse(new TextDecoder().decode(ok.body))])).toBe(42.5);
    const bad = await send(adaptor.balanceRequests!(ch('ap-bad'))[0]!);
    expect(() => adaptor.parseBalance!([JSON.parse(new TextDecoder().decode(bad.body))])).toThrow(
      'invalid api key',
    );
  });
});

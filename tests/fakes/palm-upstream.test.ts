/** The fake PaLM 2 upstream speaks what the adaptor builds and parses: generateMessage, filters, key errors. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPalmAdaptor } from '../../relay-service/src/providers/palm/adaptor.ts';
import { channel, relayInput } from '../../relay-service/src/providers/testing.ts';
import { type FakePalm, startFakePalm } from './palm-upstream.ts';

let fake: FakePalm;
beforeAll(async () => {
  fake = await startFakePalm({ keys: ['AIza-good'] });
});
afterAll(() => fake.close());

const adaptor = createPalmAdaptor();
const input = relayInput({
  upstreamModel: 'chat-bison-001',
  body: { model: 'chat-bison-001', messages: [{ role: 'user', content: 'hi' }], n: 2 },
});

async function call(key: string) {
  const req = adaptor.buildRequest(channel({ type: 11, key, baseUrl: fake.url }), input);
  const res = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body });
  return { status: res.status, body: new Uint8Array(await res.arrayBuffer()) };
}

describe('fake PaLM 2 upstream', () => {
  it('answers generateMessage with candidateCount candidates', async () => {
    const res = await call('AIza-good');
    expect(res.status).toBe(200);
    const parsed = JSON.parse(new TextDecoder().decode(res.body));
    expect(parsed.candidates).toEqual([
      { author: '1', content: 'Hello from chat-bison-001' },
      { author: '1', content: 'Hello from chat-bison-001' },
    ]);
    expect(parsed.messages).toEqual([{ author: '0', content: 'hi' }]);
    expect(fake.requests.at(-1)?.headers['x-goog-api-key']).toBe('AIza-good');
  });

  it('accepts the key as ?key= too, and refuses a missing one with 403', async () => {
    const url = `${fake.url}/v1beta2/models/chat-bison-001:generateMessage`;
    const body = JSON.stringify({ prompt: { messages: [{ content: 'x' }] } });
    const ok = await fetch(`${url}?key=AIza-good`, { method: 'POST', body });
    expect(ok.status).toBe(200);
    const missing = await fetch(url, { method: 'POST', body });
    expect(missing.status).toBe(403);
    expect((await missing.json()).error.status).toBe('PERMISSION_DENIED');
  });

  it('refuses a wrong key with 400 API_KEY_INVALID, and unknown fields', async () => {
    const res = await call('AIza-bad');
    expect(res.status).toBe(400);
    const err = adaptor.parseError({
      status: 400,
      headers: new Headers(),
      bodyText: new TextDecoder().decode(res.body),
    });
    expect(err.code).toBe('API_KEY_INVALID');
    const bad = await fetch(`${fake.url}/v1beta2/models/chat-bison-001:generateMessage?key=AIza-good`, {
      method: 'POST',
      body: JSON.stringify({ prompt: { messages: [{ content: 'x' }] }, maxOutputTokens: 5 }),
    });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toContain('Unknown name "maxOutputTokens"');
  });

  it('filters an answer when told, and answers errors', async () => {
    fake.on({ respond: { filterReason: 'OTHER' }, times: 1 });
    const got = await call('AIza-good');
    expect(got.status).toBe(200);
    const filtered = adaptor.parseResponse(input, { status: 200, headers: new Headers(), body: got.body });
    expect(JSON.parse(filtered.body as string).choices[0].finish_reason).toBe('content_filter');
    fake.on({
      respond: { error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'Quota exceeded' } },
      times: 1,
    });
    const res = await call('AIza-good');
    expect(res.status).toBe(429);
  });
});

/** The fake Dify server against the adaptor: blocking, streaming, conversations per user, errors. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDifyAdaptor } from '../../relay-service/src/providers/dify/adaptor.ts';
import { channel, relayInput, runStream } from '../../relay-service/src/providers/testing.ts';
import { type FakeDify, startFakeDify } from './dify-upstream.ts';

let fake: FakeDify;
beforeAll(async () => {
  fake = await startFakeDify({ keys: ['app-good'] });
});
afterAll(() => fake.close());

const adaptor = createDifyAdaptor();
const input = (body: Record<string, unknown>, stream = false) =>
  relayInput({
    upstreamModel: 'dify',
    stream,
    body: { model: 'dify', messages: [{ role: 'user', content: 'hi there' }], ...body },
  });
async function call(key: string, body: Record<string, unknown> = {}, stream = false) {
  const req = adaptor.buildRequest(channel({ type: 37, key, baseUrl: fake.url }), input(body, stream));
  const res = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body });
  return { status: res.status, body: new Uint8Array(await res.arrayBuffer()) };
}

describe('fake Dify', () => {
  it('answers blocking with usage and continues a conversation of the same user', async () => {
    const first = await call('app-good');
    const a = JSON.parse(new TextDecoder().decode(first.body));
    expect(a.answer).toBe(`Turn 1 of ${a.conversation_id}`);
    expect(a.metadata.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
    const second = await call('app-good', { conversation_id: a.conversation_id });
    const parsed = adaptor.parseResponse(input({}), {
      status: 200,
      headers: new Headers(),
      body: second.body,
    });
    expect(JSON.parse(parsed.body as string).choices[0].message.content).toBe(
      `Turn 2 of ${a.conversation_id}`,
    );
    const other = await call('app-good', { conversation_id: a.conversation_id, user: 'mallory' });
    expect(other.status).toBe(404);
    expect(
      adaptor.parseError({
        status: 404,
        headers: new Headers(),
        bodyText: new TextDecoder().decode(other.body),
      }).message,
    ).toBe('Conversation Not Exists.');
  });

  it('streams message events and message_end usage', async () => {
    const res = await call('app-good', {}, true);
    const { tally } = await runStream(adaptor.streamConversion(input({}, true)), [res.body]);
    expect(tally.completionText).toMatch(/^Turn 1 of [0-9a-f-]{36}$/);
    expect(tally.usage).toMatchObject({ promptTokens: 3, completionTokens: 4 });
  });

  it('refuses a wrong key with 401 and can end a stream with an error event', async () => {
    const denied = await call('app-bad');
    expect(denied.status).toBe(401);
    expect(JSON.parse(new TextDecoder().decode(denied.body))).toEqual({
      code: 'unauthorized',
      message: 'Access token is invalid',
      status: 401,
    });
    fake.on({
      respond: { streamError: { code: 'provider_quota_exceeded', message: 'quota exhausted' } },
      times: 1,
    });
    const res = await call('app-good', {}, true);
    const { text } = await runStream(adaptor.streamConversion(input({}, true)), [res.body]);
    expect(text).toContain('"error":{"message":"quota exhausted"');
  });
});

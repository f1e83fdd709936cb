// A plain `ws` client straight at the fake realtime upstream: the handshake's auth forms, the event stream of a
// response with its usage, cancel, the beta event names and Azure's route.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeRealtime, startFakeRealtime } from './openai-realtime-upstream.ts';
import { openRealtime, refusedHandshake } from './realtime-client.ts';

let fake: FakeRealtime;
let ws: string;
beforeAll(async () => {
  fake = await startFakeRealtime({ keys: ['sk-good'] });
  ws = fake.url.replace('http', 'ws');
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

describe('fake OpenAI realtime upstream', () => {
  it('refuses a wrong or missing key before the switch with 401 and OpenAI error body', async () => {
    const bad = await refusedHandshake(`${ws}/v1/realtime?model=gpt-realtime`, {
      headers: { authorization: 'Bearer sk-bad' },
    });
    expect(bad.status).toBe(401);
    expect(bad.body.error?.code).toBe('invalid_api_key');
    const none = await refusedHandshake(`${ws}/v1/realtime?model=gpt-realtime`);
    expect(none.status).toBe(401);
  });

  it('accepts the key by header or subprotocol, streams a response and reports its usage on response.done', async () => {
    const c = await openRealtime(`${ws}/v1/realtime?model=gpt-realtime`, {
      protocols: ['realtime', 'openai-insecure-api-key.sk-good'],
    });
    expect(c.ws.protocol).toBe('realtime');
    await c.waitFor('session.created');
    fake.next({
      text: 'one two three',
      audioChunks: 2,
      usage: { textIn: 5, audioIn: 6, textOut: 3, audioOut: 40 },
    });
    c.send({ type: 'response.create' });
    const [done] = await c.waitFor('response.done');
    const deltas = c.events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta);
    expect(deltas.join('')).toBe('one two three');
    expect(c.events.filter((e) => e.type === 'response.output_audio.delta')).toHaveLength(2);
    expect((done as { response: { usage: unknown } }).response.usage).toMatchObject({
      input_tokens: 11,
      output_tokens: 43,
      input_token_details: { text_tokens: 5, audio_tokens: 6 },
      output_token_details: { text_tokens: 3, audio_tokens: 40 },
    });
    expect(fake.connections[0]?.auth).toBe('subprotocol');
    c.ws.close();

    const h = await openRealtime(`${ws}/v1/realtime?model=gpt-realtime`, {
      headers: { authorization: 'Bearer sk-good', 'openai-beta': 'realtime=v1' },
    });
    await h.waitFor('session.created');
    h.send({ type: 'response.create' });
    await h.waitFor('response.done');
    // Beta clients get the beta event names.
    expect(h.events.some((e) => e.type === 'response.text.delta')).toBe(true);
    expect(h.events.some((e) => e.type === 'response.audio.delta')).toBe(true);
    expect(fake.connections[1]).toMatchObject({ auth: 'header', beta: true });
    h.ws.close();
  });

  it('a held response ends on response.cancel with status cancelled and the usage of what was sent', async () => {
    const c = await openRealtime(`${ws}/v1/realtime?model=gpt-realtime`, {
      headers: { authorization: 'Bearer sk-good' },
    });
    fake.next({ hold: true, usage: { textIn: 4, audioIn: 0, textOut: 10, audioOut: 20 } });
    c.send({ type: 'response.create' });
    await c.waitFor('response.output_audio.delta');
    expect(c.events.some((e) => e.type === 'response.done')).toBe(false);
    c.send({ type: 'response.cancel' });
    const [done] = await c.waitFor('response.done');
    expect(done).toMatchObject({
      response: { status: 'cancelled', usage: { input_tokens: 4, output_tokens: 15 } },
    });
    c.ws.close();
  });

  it("serves Azure's route with the api-key header", async () => {
    const refused = await refusedHandshake(
      `${ws}/openai/realtime?api-version=2024-10-01-preview&deployment=gpt-4o`,
      {
        headers: { 'api-key': 'nope' },
      },
    );
    expect(refused.status).toBe(401);
    const c = await openRealtime(`${ws}/openai/realtime?api-version=2024-10-01-preview&deployment=gpt-4o`, {
      headers: { 'api-key': 'sk-good' },
    });
    const [created] = await c.waitFor('session.created');
    expect(created).toMatchObject({ session: { model: 'gpt-4o' } });
    c.ws.close();
  });
});

/** The fake Spark checks the signed URL as iFlytek does, refuses at the handshake, and answers in frames. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedUrl } from '../../relay-service/src/providers/xunfei/request.ts';
import { type FakeSpark, startFakeSpark } from './xunfei-upstream.ts';

let fake: FakeSpark;
const account = { appId: 'app1', apiSecret: 'secret1', apiKey: 'key1' };
beforeAll(async () => {
  fake = await startFakeSpark({ accounts: [account] });
});
afterAll(() => fake.close());

const origin = () => new URL(fake.url.replace('http:', 'ws:'));

/** Opens, sends the frame, collects the frames until the close; or the handshake error. */
function talk(url: string, frame: unknown): Promise<{ frames: Record<string, unknown>[] } | { error: true }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    const frames: Record<string, unknown>[] = [];
    let opened = false;
    ws.addEventListener('open', () => {
      opened = true;
      ws.send(JSON.stringify(frame));
    });
    ws.addEventListener('message', (ev) => frames.push(JSON.parse(String(ev.data))));
    ws.addEventListener('close', () => resolve(opened ? { frames } : { error: true }));
    // A refused handshake: Node's WebSocket reports an error (and not always a close).
    ws.addEventListener('error', () => {
      if (!opened) resolve({ error: true });
    });
  });
}

const frame = (domain: string, appId = 'app1') => ({
  header: { app_id: appId },
  parameter: { chat: { domain } },
  payload: { message: { text: [{ role: 'user', content: 'hello' }] } },
});

describe('fake Spark', () => {
  it('accepts a correctly signed URL and answers frames with usage on the last', async () => {
    const r = await talk(signedUrl(origin(), '/v3.5/chat', account, Date.now()), frame('generalv3.5'));
    if (!('frames' in r)) throw new Error('refused');
    expect(r.frames.map((f) => (f.header as { status: number }).status)).toEqual([0, 1, 2]);
    expect(JSON.stringify(r.frames.at(-1))).toContain(
      '"usage":{"text":{"question_tokens":5,"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}',
    );
    expect(fake.requests.at(-1)).toMatchObject({ path: '/v3.5/chat', version: 'v3.5' });
  });

  it('refuses a wrong secret (401), a stale date (403) and a missing authorization (401), also over plain GET', async () => {
    fake.reset();
    const bad = signedUrl(origin(), '/v3.5/chat', { ...account, apiSecret: 'nope' }, Date.now());
    expect(await talk(bad, frame('generalv3.5'))).toEqual({ error: true });
    const stale = signedUrl(origin(), '/v3.5/chat', account, Date.now() - 301_000);
    expect(await talk(stale, frame('generalv3.5'))).toEqual({ error: true });
    expect(await talk(`${origin().href}v3.5/chat`, frame('generalv3.5'))).toEqual({ error: true });
    expect(fake.refusals).toEqual([
      { path: '/v3.5/chat', status: 401, message: 'HMAC signature does not match' },
      {
        path: '/v3.5/chat',
        status: 403,
        message:
          'HMAC signature cannot be verified, a valid date or x-date header is required for HMAC Authentication',
      },
      { path: '/v3.5/chat', status: 401, message: 'Unauthorized' },
    ]);
    const get = await fetch(bad.replace('ws:', 'http:'));
    expect(get.status).toBe(401);
    expect(await get.json()).toEqual({ message: 'HMAC signature does not match' });
    // A URL signed for another path does not open this one.
    const other = signedUrl(origin(), '/v3.1/chat', account, Date.now()).replace('/v3.1/', '/v3.5/');
    expect(await talk(other, frame('generalv3.5'))).toEqual({ error: true });
  });

  it('answers an error frame for a wrong app id or a domain that is not the version’s', async () => {
    const url = () => signedUrl(origin(), '/chat/max-32k', account, Date.now());
    const wrongApp = await talk(url(), frame('max-32k', 'other'));
    expect(wrongApp).toMatchObject({ frames: [{ header: { code: 11200, status: 2 } }] });
    const wrongDomain = await talk(url(), frame('generalv3.5'));
    expect(wrongDomain).toMatchObject({ frames: [{ header: { code: 10163 } }] });
  });

  it('rules: texts, usage, error frames and dropped sockets', async () => {
    const url = () => signedUrl(origin(), '/v4.0/chat', account, Date.now());
    fake.on({ respond: { texts: ['a', 'b'], usage: { prompt_tokens: 7, completion_tokens: 2 } }, times: 1 });
    const ok = await talk(url(), frame('4.0Ultra'));
    expect(JSON.stringify(ok)).toContain('"prompt_tokens":7,"completion_tokens":2');
    fake.on({ respond: { error: { code: 10013, message: 'audit' }, errorAfter: 1 }, times: 1 });
    const err = await talk(url(), frame('4.0Ultra'));
    expect(err).toMatchObject({ frames: [{ header: { code: 0 } }, { header: { code: 10013 } }] });
    fake.on({ respond: { dropAfter: 1 }, times: 1 });
    const cut = await talk(url(), frame('4.0Ultra'));
    expect(cut).toMatchObject({ frames: [{ header: { status: 0 } }] });
  });
});

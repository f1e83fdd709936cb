import { describe, expect, it, vi } from 'vitest';
import { createApiClient, EXPIRED_LOGIN_URL } from './api-client.ts';

const t = (key: string, options?: Record<string, unknown>) =>
  options ? `${key}:${JSON.stringify(options)}` : key;

function setup(response: Response | Error) {
  const notify = vi.fn();
  const redirect = vi.fn();
  const fetch = vi.fn(async () => {
    if (response instanceof Error) throw response;
    return response;
  });
  const api = createApiClient({ t, notify, redirect, fetch: fetch as unknown as typeof globalThis.fetch });
  return { api, notify, redirect, fetch };
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

describe('api-client shared response handling (seed 000 §8)', () => {
  it('returns data of a successful envelope without a toast', async () => {
    const { api, notify } = setup(json({ success: true, message: '', data: { n: 1 } }));
    expect(await api.get('/api/status')).toEqual({ ok: true, data: { n: 1 }, message: '' });
    expect(notify).not.toHaveBeenCalled();
  });

  it('sends 401 to /login?expired=true', async () => {
    const { api, notify, redirect } = setup(json({ success: false, message: 'no' }, 401));
    const res = await api.get('/api/user/self');
    expect(redirect).toHaveBeenCalledWith(EXPIRED_LOGIN_URL);
    expect(EXPIRED_LOGIN_URL).toBe('/login?expired=true');
    expect(res.ok).toBe(false);
    expect(notify).not.toHaveBeenCalled();
  });

  it.each([
    [429, 'errors.tooManyRequests'],
    [500, 'errors.internal'],
    [405, 'errors.demoOnly'],
  ])('shows the fixed message for HTTP %i', async (status, key) => {
    const { api, notify, redirect } = setup(json({ success: false, message: 'server text' }, status));
    const res = await api.get('/api/x');
    expect(res).toMatchObject({ ok: false, status, message: key });
    expect(notify).toHaveBeenCalledWith(key);
    expect(redirect).not.toHaveBeenCalled();
  });

  it("shows 'error: ' plus the message for other HTTP failures", async () => {
    const { api, notify } = setup(json({ success: false, message: 'token not found' }, 404));
    await api.get('/api/token/9');
    expect(notify).toHaveBeenCalledWith('errors.withMessage:{"message":"token not found"}');
  });

  it('falls back to the status text when a failure has no envelope', async () => {
    const { api, notify } = setup(new Response('oops', { status: 502, statusText: 'Bad Gateway' }));
    await api.get('/api/x');
    expect(notify).toHaveBeenCalledWith('errors.withMessage:{"message":"Bad Gateway"}');
  });

  it('shows the server message when success is false', async () => {
    const { api, notify } = setup(json({ success: false, message: '用户名或密码错误', data: null }));
    expect(await api.post('/api/user/login', { username: 'a' })).toMatchObject({
      ok: false,
      status: 200,
      message: '用户名或密码错误',
    });
    expect(notify).toHaveBeenCalledWith('用户名或密码错误');
  });

  it('reports a network failure', async () => {
    const { api, notify } = setup(new TypeError('fetch failed'));
    expect(await api.get('/api/x')).toMatchObject({ ok: false, status: 0, message: 'errors.network' });
    expect(notify).toHaveBeenCalledWith('errors.network');
  });

  it('sends JSON bodies with the right headers and same-origin credentials', async () => {
    const { api, fetch } = setup(json({ success: true, message: '', data: null }));
    await api.put('/api/option/', { key: 'Notice', value: 'hi' });
    const [url, init] = fetch.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe('/api/option/');
    expect(init.method).toBe('PUT');
    expect(init.credentials).toBe('same-origin');
    expect(new Headers(init.headers).get('Content-Type')).toBe('application/json');
    expect(init.body).toBe('{"key":"Notice","value":"hi"}');
  });
});

import { describe, expect, it } from 'vitest';
import { HOSTILE_REDIRECTS } from '#app/utils/hostile-redirects.testing.ts';
import { action } from './preferences.ts';

function post(fields: Record<string, string>) {
  const request = new Request('http://localhost/preferences', {
    method: 'POST',
    body: new URLSearchParams(fields),
  });
  return action({ request, params: {}, context: {} as never });
}

type DataResult = { data: unknown; init: ResponseInit | null };

describe('POST /preferences', () => {
  it('without JavaScript: sets the cookie and redirects back (PRG)', async () => {
    const res = (await post({ intent: 'theme', theme: 'dark', redirectTo: '/about?x=1' })) as Response;
    expect(res.status).toBe(302);
    expect(res.headers.get('Location')).toBe('/about?x=1');
    expect(res.headers.get('Set-Cookie')).toMatch(/^theme=/);
  });

  it('never redirects off-site', async () => {
    const res = (await post({
      intent: 'language',
      lng: 'en',
      redirectTo: 'https://evil.example/',
    })) as Response;
    expect(res.headers.get('Location')).toBe('/');
    expect(res.headers.get('Set-Cookie')).toMatch(/^lng=/);
  });

  it('sends every hostile redirectTo to a path on our own origin (issue 23 item 6)', async () => {
    for (const target of HOSTILE_REDIRECTS) {
      const res = (await post({ intent: 'theme', theme: 'dark', redirectTo: target })) as Response;
      const location = res.headers.get('Location') ?? '';
      expect(location, JSON.stringify(target)).toMatch(/^\/(?![/\\])/);
      expect(new URL(location, 'http://localhost').origin).toBe('http://localhost');
    }
  });

  it('from a fetcher (no redirectTo): answers data with the cookie', async () => {
    const res = (await post({ intent: 'sidebar', collapsed: 'true' })) as unknown as DataResult;
    expect(res.data).toEqual({ ok: true });
    expect(new Headers(res.init?.headers).get('Set-Cookie')).toMatch(/^sidebar_collapsed=/);
    const size = (await post({ intent: 'pageSize', pageSize: '50' })) as unknown as DataResult;
    expect(new Headers(size.init?.headers).get('Set-Cookie')).toMatch(/^page_size=/);
  });

  it('keeps a chosen time zone in the tz cookie (the no-JavaScript way to set it)', async () => {
    const res = (await post({ intent: 'timeZone', tz: 'Asia/Shanghai', redirectTo: '/setting' })) as Response;
    expect(res.status).toBe(302);
    expect(res.headers.get('Location')).toBe('/setting');
    expect(res.headers.get('Set-Cookie')).toMatch(/^tz=Asia%2FShanghai; Path=\/;/);
  });

  it('rejects unknown intents and values with 400', async () => {
    const cases: Record<string, string>[] = [
      { intent: 'nope' },
      { intent: 'theme', theme: 'blue' },
      { intent: 'language', lng: 'fr' },
      { intent: 'timeZone', tz: 'Mars/Olympus' },
      { intent: 'timeZone' },
    ];
    for (const fields of cases) {
      const res = (await post(fields)) as unknown as DataResult;
      expect(res.init?.status).toBe(400);
    }
  });
});

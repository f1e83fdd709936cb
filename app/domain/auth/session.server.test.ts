import { describe, expect, it, vi } from 'vitest';

vi.mock('@switchyard/db/entities/session.ts', () => ({ Session: class Session {} }));

const {
  clearSessionCookie,
  createSessionToken,
  getSessionUser,
  loginPath,
  readSessionToken,
  requireUser,
  serializeSessionCookie,
  sha256Hex,
} = await import('./session.server.ts');

type Row = { id: string; expiresAt: Date; user: Record<string, unknown> };

function services(rows: Row[]) {
  const em = {
    findOne: vi.fn(
      async (_entity: unknown, where: { id: string }) => rows.find((r) => r.id === where.id) ?? null,
    ),
    nativeDelete: vi.fn(async () => 1),
  };
  const orm = { em: { fork: () => em } };
  return { em, services: { orm, options: {}, relay: null, version: 'v', startedAt: 0 } as never };
}

const user = (over: Record<string, unknown> = {}) => ({
  id: 7,
  username: 'alice',
  displayName: 'Alice',
  role: 1,
  status: 1,
  group: 'default',
  deletedAt: null,
  password: 'hash-must-not-leak',
  ...over,
});

const req = (cookie?: string, url = 'http://localhost/token?p=2') =>
  new Request(url, { headers: cookie ? { Cookie: cookie } : {} });

describe('session cookie', () => {
  it('creates opaque url-safe tokens and reads them back', () => {
    const token = createSessionToken();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(createSessionToken()).not.toBe(token);
    expect(readSessionToken(req(`lng=x; sy_session=${token}; theme=y`))).toBe(token);
    expect(readSessionToken(req('sy_session=<script>'))).toBeNull();
    expect(readSessionToken(req())).toBeNull();
  });

  it('serialises an HttpOnly, SameSite=Lax cookie, Secure on https', () => {
    const c = serializeSessionCookie(req(), 'tok', new Date(Date.now() + 60_000));
    expect(c).toMatch(/^sy_session=tok; Path=\/; HttpOnly; SameSite=Lax; Max-Age=(59|60)$/);
    expect(serializeSessionCookie(req(undefined, 'https://x/'), 'tok', new Date())).toContain('Secure');
    expect(clearSessionCookie(req())).toContain('Max-Age=0');
  });

  it('hashes with sha-256 hex', async () => {
    expect(await sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('getSessionUser', () => {
  it('finds the user by the sha-256 of the token and exposes only public fields', async () => {
    const token = createSessionToken();
    const { services: s, em } = services([
      { id: await sha256Hex(token), expiresAt: new Date(Date.now() + 60_000), user: user() },
    ]);
    expect(await getSessionUser(req(`sy_session=${token}`), s)).toEqual({
      id: 7,
      username: 'alice',
      displayName: 'Alice',
      role: 1,
      group: 'default',
    });
    expect(em.findOne.mock.calls[0]?.[1]).toEqual({ id: await sha256Hex(token) });
  });

  it('returns null for no cookie, unknown, expired, banned or deleted', async () => {
    const t = createSessionToken();
    const id = await sha256Hex(t);
    const later = new Date(Date.now() + 60_000);
    const cookie = `sy_session=${t}`;
    expect(await getSessionUser(req(), services([]).services)).toBeNull();
    expect(await getSessionUser(req(cookie), services([]).services)).toBeNull();
    const expired = services([{ id, expiresAt: new Date(Date.now() - 1), user: user() }]).services;
    expect(await getSessionUser(req(cookie), expired)).toBeNull();
    const banned = services([{ id, expiresAt: later, user: user({ status: 2 }) }]).services;
    expect(await getSessionUser(req(cookie), banned)).toBeNull();
    const deleted = services([{ id, expiresAt: later, user: user({ deletedAt: new Date() }) }]).services;
    expect(await getSessionUser(req(cookie), deleted)).toBeNull();
  });

  it('requireUser redirects to /login with the way back', async () => {
    const thrown = await requireUser(req(), services([]).services).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(Response);
    expect((thrown as Response).status).toBe(302);
    expect((thrown as Response).headers.get('Location')).toBe('/login?redirectTo=%2Ftoken%3Fp%3D2');
    expect(loginPath(req(undefined, 'http://localhost/'))).toBe('/login');
    expect(loginPath(req(undefined, 'http://localhost/'), { expired: true })).toBe('/login?expired=true');
  });
});

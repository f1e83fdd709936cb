/**
 * A real OAuth2 authorization server on loopback (oauth2-mock-server, generated RS256 key) that plays GitHub
 * and LinuxDO: /authorize auto-approves and redirects to `redirect_uri` with code + state; POST /token
 * exchanges the code; GET /github/user and /linuxdo/user answer in the providers' shapes. Which account
 * signs in is chosen by the authorize link's `login_hint` (default `octocat`): code -> access token
 * `mock-<login>` -> user `{ id: <stable number>, login, name, email }` (GitHub) or
 * `{ id, username, name, active, trust_level, silenced }` (LinuxDO).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { OAuth2Server } from 'oauth2-mock-server';

export type OAuthFake = {
  issuer: string;
  /** Env vars that point the product at this fake (OAUTH_GITHUB_* and OAUTH_LINUXDO_*). */
  env: Record<string, string>;
  close(): Promise<void>;
};

/** The numeric id the fake gives `login` (stable, so tests can predict users.github_id). */
export function fakeProviderId(login: string): number {
  let h = 7;
  for (const ch of login) h = (h * 31 + ch.charCodeAt(0)) % 1_000_000_007;
  return 1_000 + h;
}

export async function startOAuthFake(): Promise<OAuthFake> {
  const server = new OAuth2Server();
  await server.issuer.keys.generate('RS256');
  await server.start(0, '127.0.0.1');
  const issuer = (server.issuer.url ?? '').replace(/\/$/, '');
  const codes = new Map<string, string>();

  server.service.on('beforeAuthorizeRedirect', ({ url }: { url: URL }, req: IncomingMessage) => {
    const hint = new URL(req.url ?? '/', issuer).searchParams.get('login_hint') || 'octocat';
    const code = url.searchParams.get('code');
    if (code) codes.set(code, hint);
  });
  server.service.on(
    'beforeResponse',
    (
      response: { body: Record<string, unknown> },
      req: IncomingMessage & { body?: Record<string, unknown> },
    ) => {
      const login = codes.get(String(req.body?.code ?? ''));
      if (login) {
        codes.delete(String(req.body?.code));
        response.body.access_token = `mock-${login}`;
      }
    },
  );

  const userRoute = (shape: 'github' | 'linuxdo') => (req: IncomingMessage, res: ServerResponse) => {
    const token = /^Bearer mock-(.+)$/.exec(req.headers.authorization ?? '')?.[1];
    res.setHeader('Content-Type', 'application/json');
    if (!token) {
      res.statusCode = 401;
      res.end(JSON.stringify({ message: 'Bad credentials' }));
      return;
    }
    const id = fakeProviderId(token);
    const body =
      shape === 'github'
        ? { id, login: token, name: `Mock ${token}`, email: `${token}@users.example.com` }
        : { id, username: token, name: `Mock ${token}`, active: true, trust_level: 1, silenced: false };
    res.end(JSON.stringify(body));
  };
  server.service.addRoute('GET', '/github/user', userRoute('github'));
  server.service.addRoute('GET', '/linuxdo/user', userRoute('linuxdo'));

  const env: Record<string, string> = {};
  for (const p of ['github', 'linuxdo'] as const) {
    const P = p.toUpperCase();
    env[`OAUTH_${P}_AUTHORIZE_URL`] = `${issuer}/authorize`;
    env[`OAUTH_${P}_TOKEN_URL`] = `${issuer}/token`;
    env[`OAUTH_${P}_USER_URL`] = `${issuer}/${p}/user`;
  }
  return { issuer, env, close: () => server.stop() };
}

/**
 * A fake of Google Vertex AI for relay tests: the OAuth token endpoint of a service account, and the Claude
 * (publishers/anthropic) and Gemini (publishers/google) model endpoints of a project.
 *
 * - `POST /token`: the JWT bearer grant (RFC 7523) as Google's token endpoint checks it: form body
 *   `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<JWT>`; the assertion must be RS256-signed
 *   by the private key of a service account this fake issued (`serviceAccount()` makes a key pair per run with
 *   node:crypto and returns the JSON credential, token_uri pointing here), with `iss` its email, `aud` this
 *   token URI, a cloud-platform `scope`, and `iat`/`exp` at most an hour apart and not expired. Otherwise 400
 *   `{"error":"invalid_grant","error_description":...}`. Success: `{access_token, expires_in, token_type}`.
 * - `POST /v1/projects/{p}/locations/{region}/publishers/anthropic/models/{model}:rawPredict|streamRawPredict`
 *   (Anthropic's Messages body with `anthropic_version: vertex-2023-10-16`, no `model`) and
 *   `.../publishers/google/models/{model}:generateContent|streamGenerateContent?alt=sse`: the bearer token must be
 *   one this fake issued for that project (401 UNAUTHENTICATED / 403 PERMISSION_DENIED in Google's envelope
 *   otherwise). Answers come from the Claude and Gemini fakes running inside (`claude` / `gemini` take their
 *   rules), so they are the providers' own formats.
 */
import { generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jwtVerify } from 'jose';
import { type FakeAnthropic, startFakeAnthropic } from './anthropic-upstream.ts';
import { type FakeGemini, startFakeGemini } from './gemini-upstream.ts';

export type VertexRequest = {
  path: string;
  search: string;
  headers: Record<string, string>;
  body: Record<string, unknown> | null;
  /** For model calls: where and what. */
  project?: string;
  region?: string;
  publisher?: string;
  model?: string;
  method?: string;
};

export type VertexRule = {
  model?: string;
  /** A Google error: HTTP status, Google status (INVALID_ARGUMENT, RESOURCE_EXHAUSTED, ...), message. */
  error: { status: number; googleStatus: string; message: string };
  times?: number;
};

export type FakeVertex = {
  url: string;
  tokenUri: string;
  /** Model calls and token exchanges, in order. */
  requests: VertexRequest[];
  tokenExchanges: number;
  /** The Claude and Gemini fakes that produce the answers (their rules set content and usage). */
  claude: FakeAnthropic;
  gemini: FakeGemini;
  /** A new service account of `project` (fresh RSA key pair), as the JSON credential Google hands out. */
  serviceAccount(project: string, opts?: { registered?: boolean }): string;
  /** Forget every issued access token (the next call with one is 401). */
  revokeTokens(): void;
  on(rule: VertexRule): void;
  reset(): void;
  close(): Promise<void>;
};

type Obj = Record<string, unknown>;

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });

export async function startFakeVertex(): Promise<FakeVertex> {
  const claude = await startFakeAnthropic();
  const gemini = await startFakeGemini();
  const accounts = new Map<string, { project: string; publicKey: KeyObject }>();
  const tokens = new Map<string, { project: string; expiresAt: number }>();
  const requests: VertexRequest[] = [];
  let rules: VertexRule[] = [];
  let tokenUri = '';
  let exchanges = 0;
  let seq = 0;

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
    res.end(JSON.stringify(body));
  };
  const googleError = (res: ServerResponse, status: number, googleStatus: string, message: string) =>
    json(res, status, { error: { code: status, message, status: googleStatus } });

  async function token(res: ServerResponse, text: string) {
    exchanges++;
    const form = new URLSearchParams(text);
    const grantError = (description: string) =>
      json(res, 400, { error: 'invalid_grant', error_description: description });
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer')
      return json(res, 400, { error: 'unsupported_grant_type', error_description: 'Invalid grant_type: ' });
    const assertion = form.get('assertion') ?? '';
    const payload = JSON.parse(
      Buffer.from(assertion.split('.')[1] ?? '', 'base64url').toString() || '{}',
    ) as Obj;
    const account = accounts.get(String(payload.iss));
    if (!account) return grantError('Invalid JWT Signature.');
    try {
      const { payload: claims } = await jwtVerify(assertion, account.publicKey, {
        algorithms: ['RS256'],
        audience: tokenUri,
        issuer: String(payload.iss),
      });
      if (
        !String(claims.scope ?? '')
          .split(' ')
          .includes('https://www.googleapis.com/auth/cloud-platform')
      )
        return grantError('Invalid OAuth scope or ID token audience provided.');
      if (typeof claims.iat !== 'number' || typeof claims.exp !== 'number' || claims.exp - claims.iat > 3600)
        return grantError('Invalid JWT: Expiration must not be more than one hour after issued time.');
    } catch {
      return grantError('Invalid JWT Signature.');
    }
    const accessToken = `ya29.fake-${randomBytes(12).toString('hex')}`;
    tokens.set(accessToken, { project: account.project, expiresAt: Date.now() + 3599_000 });
    json(res, 200, { access_token: accessToken, expires_in: 3599, token_type: 'Bearer' });
  }

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const text = await readBody(req);
    if (req.method === 'POST' && url.pathname === '/token') return token(res, text);

    let body: Obj | null = null;
    try {
      body = text ? (JSON.parse(text) as Obj) : null;
    } catch {
      body = null;
    }
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    const m =
      /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(anthropic|google)\/models\/([^/:]+):(\w+)$/.exec(
        url.pathname,
      );
    const record: VertexRequest = { path: url.pathname, search: url.search, headers, body };
    if (m) {
      record.project = decodeURIComponent(m[1]!);
      record.region = m[2];
      record.publisher = m[3];
      record.model = decodeURIComponent(m[4]!);
      record.method = m[5];
    }
    requests.push(record);

    const bearer = /^Bearer (.+)$/.exec(headers.authorization ?? '')?.[1];
    const issued = bearer ? tokens.get(bearer) : undefined;
    if (!issued || issued.expiresAt < Date.now())
      return googleError(
        res,
        401,
        'UNAUTHENTICATED',
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
      );
    if (!m) return googleError(res, 404, 'NOT_FOUND', `The requested URL ${url.pathname} was not found.`);
    if (issued.project !== record.project)
      return googleError(
        res,
        403,
        'PERMISSION_DENIED',
        `Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/${record.project}/locations/${record.region}/publishers/${record.publisher}/models/${record.model}' (or it may not exist).`,
      );
    const ruleIndex = rules.findIndex((r) => !r.model || r.model === record.model);
    const rule = ruleIndex >= 0 ? rules[ruleIndex] : undefined;
    if (rule?.times !== undefined && --rule.times <= 0) rules.splice(ruleIndex, 1);
    if (rule) return googleError(res, rule.error.status, rule.error.googleStatus, rule.error.message);
    if (!body) return googleError(res, 400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');

    let inner: Response;
    if (record.publisher === 'anthropic') {
      if (record.method !== 'rawPredict' && record.method !== 'streamRawPredict')
        return googleError(
          res,
          400,
          'INVALID_ARGUMENT',
          `Unsupported method ${record.method} for Anthropic models.`,
        );
      if (body.anthropic_version !== 'vertex-2023-10-16')
        return json(res, 400, {
          type: 'error',
          error: {
            type: 'invalid_request_error',
            message: 'anthropic_version: vertex-2023-10-16 is required',
          },
        });
      if ('model' in body)
        return json(res, 400, {
          type: 'error',
          error: { type: 'invalid_request_error', message: 'model: Extra inputs are not permitted' },
        });
      if ((record.method === 'streamRawPredict') !== (body.stream === true))
        return json(res, 400, {
          type: 'error',
          error: {
            type: 'invalid_request_error',
            message: 'streamRawPredict takes "stream": true, rawPredict not',
          },
        });
      const { anthropic_version: _v, ...rest } = body;
      inner = await fetch(`${claude.url}/v1/messages`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': 'vertex',
          'anthropic-version': '2023-06-01',
          ...(headers['anthropic-beta'] ? { 'anthropic-beta': headers['anthropic-beta'] } : {}),
        },
        body: JSON.stringify({ ...rest, model: record.model }),
      });
    } else {
      if (record.method !== 'generateContent' && record.method !== 'streamGenerateContent')
        return googleError(res, 400, 'INVALID_ARGUMENT', `Unsupported method ${record.method}.`);
      inner = await fetch(
        `${gemini.url}/v1beta/models/${encodeURIComponent(record.model!)}:${record.method}${url.search}`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-goog-api-key': 'vertex' },
          body: text,
        },
      );
    }
    res.writeHead(inner.status, {
      'content-type': inner.headers.get('content-type') ?? 'application/json',
      'x-vertex-request': String(++seq),
    });
    res.end(Buffer.from(await inner.arrayBuffer()));
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;
  tokenUri = `${base}/token`;
  return {
    url: base,
    tokenUri,
    requests,
    get tokenExchanges() {
      return exchanges;
    },
    claude,
    gemini,
    serviceAccount(project, opts = {}) {
      const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const email = `relay-${randomBytes(4).toString('hex')}@${project}.iam.gserviceaccount.com`;
      if (opts.registered !== false) accounts.set(email, { project, publicKey });
      return JSON.stringify({
        type: 'service_account',
        project_id: project,
        private_key_id: randomBytes(20).toString('hex'),
        private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        client_email: email,
        client_id: String(100000000000000000000n + BigInt(randomBytes(4).readUInt32BE())),
        auth_uri: 'https://accounts.google.com/o/oauth2/auth',
        token_uri: tokenUri,
        auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
        universe_domain: 'googleapis.com',
      });
    },
    revokeTokens() {
      tokens.clear();
    },
    on(rule) {
      rules.push(rule);
    },
    reset() {
      rules = [];
      requests.length = 0;
      exchanges = 0;
      claude.reset();
      gemini.reset();
    },
    close: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await claude.close();
      await gemini.close();
    },
  };
}

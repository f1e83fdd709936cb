/** The Vertex fake checks the JWT bearer grant and the Bearer token as Google does, and answers in Vertex's formats. */
import { generateKeyPairSync } from 'node:crypto';
import { importPKCS8, SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeVertex, startFakeVertex } from './vertex-upstream.ts';

let fake: FakeVertex;
beforeAll(async () => {
  fake = await startFakeVertex();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

type Account = { project_id: string; private_key: string; client_email: string; token_uri: string };

async function assertion(account: Account, over: { aud?: string; exp?: number; privateKey?: string } = {}) {
  const key = await importPKCS8(over.privateKey ?? account.private_key, 'RS256');
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ scope: 'https://www.googleapis.com/auth/cloud-platform' })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
    .setIssuer(account.client_email)
    .setAudience(over.aud ?? account.token_uri)
    .setIssuedAt(now)
    .setExpirationTime(over.exp ?? now + 3600)
    .sign(key);
}

const exchange = (account: Account, jwt: string) =>
  fetch(account.token_uri, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: jwt }),
  });

describe('fake Vertex AI', () => {
  it('exchanges a correctly signed assertion for a token that opens the project’s models', async () => {
    const account = JSON.parse(fake.serviceAccount('p1')) as Account;
    expect(account.token_uri).toBe(fake.tokenUri);
    const res = await exchange(account, await assertion(account));
    expect(res.status).toBe(200);
    const token = (await res.json()) as { access_token: string; expires_in: number; token_type: string };
    expect(token).toMatchObject({ expires_in: 3599, token_type: 'Bearer' });

    fake.claude.on({ respond: { content: 'ok', usage: { input_tokens: 2, output_tokens: 1 } } });
    const claude = await fetch(
      `${fake.url}/v1/projects/p1/locations/us-east5/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${token.access_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          anthropic_version: 'vertex-2023-10-16',
          max_tokens: 5,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      },
    );
    expect(await claude.json()).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'ok' }] });

    const gemini = await fetch(
      `${fake.url}/v1/projects/p1/locations/global/publishers/google/models/gemini-2.5-flash:generateContent`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${token.access_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
      },
    );
    expect(((await gemini.json()) as { candidates: unknown[] }).candidates).toHaveLength(1);
    expect(fake.requests.map((r) => [r.publisher, r.region, r.model])).toEqual([
      ['anthropic', 'us-east5', 'claude-sonnet-4@20250514'],
      ['google', 'global', 'gemini-2.5-flash'],
    ]);

    // Another project's models stay closed to this account's token.
    const other = await fetch(
      `${fake.url}/v1/projects/p2/locations/global/publishers/google/models/gemini-2.5-flash:generateContent`,
      { method: 'POST', headers: { authorization: `Bearer ${token.access_token}` }, body: '{}' },
    );
    expect(other.status).toBe(403);
  });

  it('refuses a wrong signature, a wrong audience, an over-long assertion, an unknown account and a bad token', async () => {
    const account = JSON.parse(fake.serviceAccount('p1')) as Account;
    const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    for (const jwt of [
      await assertion(account, { privateKey: stranger }),
      await assertion(account, { aud: 'https://oauth2.googleapis.com/token' }),
      await assertion(account, { exp: Math.floor(Date.now() / 1000) + 7200 }),
    ]) {
      const res = await exchange(account, jwt);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe('invalid_grant');
    }
    const unknown = JSON.parse(fake.serviceAccount('p1', { registered: false })) as Account;
    expect((await exchange(unknown, await assertion(unknown))).status).toBe(400);
    const noToken = await fetch(
      `${fake.url}/v1/projects/p1/locations/global/publishers/google/models/gemini-2.5-flash:generateContent`,
      { method: 'POST', headers: { authorization: 'Bearer ya29.made-up' }, body: '{}' },
    );
    expect(noToken.status).toBe(401);
    expect(((await noToken.json()) as { error: { status: string } }).error.status).toBe('UNAUTHENTICATED');
  });
});

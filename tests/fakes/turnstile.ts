/**
 * A faithful fake of Cloudflare Turnstile's siteverify endpoint (POST form or JSON with `secret`, `response`,
 * optional `remoteip`; answers `{ success, "error-codes": [...], challenge_ts, hostname }`). Used by unit tests
 * and by the e2e product (TURNSTILE_VERIFY_URL). By default it accepts tokens that start with `pass`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export type TurnstileRequest = { secret: string; response: string; remoteip: string | null };

export type TurnstileFake = { url: string; requests: TurnstileRequest[]; close(): Promise<void> };

export async function startTurnstileFake(
  opts: { accept?: (token: string) => boolean; secret?: string } = {},
): Promise<TurnstileFake> {
  const accept = opts.accept ?? ((token: string) => token.startsWith('pass'));
  const requests: TurnstileRequest[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const type = req.headers['content-type'] ?? '';
      const fields: Record<string, string> = type.includes('application/json')
        ? (JSON.parse(body || '{}') as Record<string, string>)
        : Object.fromEntries(new URLSearchParams(body));
      const entry = {
        secret: fields.secret ?? '',
        response: fields.response ?? '',
        remoteip: fields.remoteip ?? null,
      };
      requests.push(entry);
      const errors: string[] = [];
      if (req.method !== 'POST') errors.push('bad-request');
      if (!entry.secret) errors.push('missing-input-secret');
      else if (opts.secret && entry.secret !== opts.secret) errors.push('invalid-input-secret');
      if (!entry.response) errors.push('missing-input-response');
      else if (!accept(entry.response)) errors.push('invalid-input-response');
      const success = errors.length === 0;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          success
            ? { success, 'error-codes': [], challenge_ts: new Date().toISOString(), hostname: 'localhost' }
            : { success, 'error-codes': errors },
        ),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/turnstile/v0/siteverify`,
    requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/**
 * SMTP capture server on loopback for tests: accepts any (or no) credentials, no TLS, parses every message with
 * mailparser and keeps it in `messages`. `waitFor(predicate)` resolves with the first captured message matching
 * the predicate (already captured or arriving later) and rejects after `timeoutMs`.
 */
import type { AddressInfo } from 'node:net';
import { type AddressObject, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export type CapturedMail = {
  /** Envelope recipients (RCPT TO), lower-cased; falls back to the To header. */
  to: string[];
  /** Envelope sender (MAIL FROM), or the From header when the envelope has none. */
  from: string;
  subject: string;
  text: string;
  html: string;
  /** Raw header `To` text as parsed (e.g. `Alice <alice@example.com>`). */
  toHeader: string;
  /** Username given in AUTH, when the client authenticated. */
  authUser: string | null;
};

export type SmtpCapture = {
  host: string;
  port: number;
  messages: CapturedMail[];
  waitFor(predicate: (mail: CapturedMail) => boolean, timeoutMs?: number): Promise<CapturedMail>;
  /** Drops the captured messages. */
  clear(): void;
  close(): Promise<void>;
};

function addressText(value: AddressObject | AddressObject[] | undefined): string {
  if (!value) return '';
  return (Array.isArray(value) ? value : [value]).map((a) => a.text).join(', ');
}

function addresses(value: AddressObject | AddressObject[] | undefined): string[] {
  if (!value) return [];
  return (Array.isArray(value) ? value : [value])
    .flatMap((a) => a.value.map((v) => v.address ?? ''))
    .filter(Boolean)
    .map((a) => a.toLowerCase());
}

export async function startSmtpCapture(): Promise<SmtpCapture> {
  const messages: CapturedMail[] = [];
  const waiters = new Set<{ predicate: (m: CapturedMail) => boolean; resolve: (m: CapturedMail) => void }>();

  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN', 'CRAM-MD5'],
    logger: false,
    banner: 'switchyard smtp capture',
    onAuth(auth, _session, callback) {
      callback(null, { user: auth.username ?? 'anonymous' });
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          const envelopeTo = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
          const mailFrom = session.envelope.mailFrom;
          const mail: CapturedMail = {
            to: envelopeTo.length > 0 ? envelopeTo : addresses(parsed.to),
            from: (mailFrom ? mailFrom.address : '') || addressText(parsed.from),
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            html: typeof parsed.html === 'string' ? parsed.html : '',
            toHeader: addressText(parsed.to),
            authUser: typeof session.user === 'string' ? session.user : null,
          };
          messages.push(mail);
          for (const w of [...waiters]) {
            if (w.predicate(mail)) {
              waiters.delete(w);
              w.resolve(mail);
            }
          }
          callback();
        })
        .catch((err: Error) => callback(err));
    },
  });

  const host = '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Connection-level errors (client hang-ups) must not crash the test process.
  server.on('error', () => {});
  const { port } = server.server.address() as AddressInfo;

  return {
    host,
    port,
    messages,
    waitFor(predicate, timeoutMs = 5000) {
      const found = messages.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise<CapturedMail>((resolve, reject) => {
        const waiter = {
          predicate,
          resolve: (m: CapturedMail) => {
            clearTimeout(timer);
            resolve(m);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no matching mail within ${timeoutMs} ms (${messages.length} captured)`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    clear() {
      messages.length = 0;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The first link in a captured mail whose URL contains `fragment` (e.g. '/user/reset?'): the html href first,
 * else the plain text (trailing sentence punctuation stripped, `&amp;` decoded).
 */
export function findLink(mail: Pick<CapturedMail, 'html' | 'text'>, fragment: string): URL | null {
  const hrefs = [...mail.html.matchAll(/href="([^"]+)"/g)].map((m) => m[1] ?? '');
  const texts = [...mail.text.matchAll(/https?:\/\/\S+/g)].map((m) => m[0]);
  const raw = [...hrefs, ...texts].find((u) => u.includes(fragment));
  if (!raw) return null;
  return new URL(raw.replaceAll('&amp;', '&').replace(/[.,;:!?)\]]+$/, ''));
}

/** The first run of `digits` digits in a captured mail's text (a verification code). */
export function findCode(mail: Pick<CapturedMail, 'text'>, digits = 6): string | null {
  return new RegExp(`\\b(\\d{${digits}})\\b`).exec(mail.text)?.[1] ?? null;
}

/**
 * The Notice option as a dialog remembered per notice text: closing it stores a short hash of the text in a
 * cookie, so the same notice is not shown again while a new notice is. A cookie (not localStorage) lets the
 * server render the right page with or without JavaScript.
 */
import { createHash } from 'node:crypto';

export const NOTICE_COOKIE = 'sy_notice';
/** One year, like a remembered preference. */
const MAX_AGE = 365 * 24 * 60 * 60;

export function noticeHash(notice: string): string {
  return createHash('sha256').update(notice.trim()).digest('hex').slice(0, 16);
}

export function readNoticeCookie(request: Request): string | null {
  const header = request.headers.get('Cookie') ?? '';
  for (const part of header.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === NOTICE_COOKIE) return rest.join('=');
  }
  return null;
}

/** Whether this request's visitor already closed exactly this notice. */
export function noticeDismissed(request: Request, notice: string): boolean {
  return notice.trim() !== '' && readNoticeCookie(request) === noticeHash(notice);
}

/** The cookie that remembers `hash` (only a 16-hex-digit hash is accepted; anything else is null). */
export function dismissNoticeCookie(request: Request, hash: string): string | null {
  if (!/^[0-9a-f]{16}$/.test(hash)) return null;
  const secure = new URL(request.url).protocol === 'https:' ? '; Secure' : '';
  return `${NOTICE_COOKIE}=${hash}; Path=/; Max-Age=${MAX_AGE}; SameSite=Lax${secure}`;
}

/**
 * Times in the user's time zone (seed 001 §9: shown as year-month-day hour:minute:second; unix seconds in calls).
 * The zone comes from the browser (Intl.DateTimeFormat().resolvedOptions().timeZone), kept in the `tz` cookie so
 * the server renders it right; UTC until it is known. Pure functions, shared by the server and the browser.
 */

export const TIME_ZONE_COOKIE = 'tz';
export const DEFAULT_TIME_ZONE = 'UTC';
const ONE_YEAR = 60 * 60 * 24 * 365;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Whether `value` names an IANA time zone this runtime knows (e.g. 'Asia/Shanghai', 'UTC'). */
export function isTimeZone(value: unknown): value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 64) return false;
  try {
    formatter(value);
    return true;
  } catch {
    return false;
  }
}

/** The zone to use: `value` when it is a known zone, else UTC. */
export function normalizeTimeZone(value: unknown): string {
  return isTimeZone(value) ? value : DEFAULT_TIME_ZONE;
}

type Parts = { year: number; month: number; day: number; hour: number; minute: number; second: number };

function partsAt(ms: number, timeZone: string): Parts {
  const out: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(ms))) {
    if (p.type !== 'literal') out[p.type] = Number(p.value);
  }
  return {
    year: out.year ?? 1970,
    month: out.month ?? 1,
    day: out.day ?? 1,
    hour: (out.hour ?? 0) % 24,
    minute: out.minute ?? 0,
    second: out.second ?? 0,
  };
}

/** The zone's offset from UTC at instant `ms`, in milliseconds (Asia/Shanghai: +8h). */
export function zoneOffsetMs(ms: number, timeZone: string): number {
  const p = partsAt(ms, timeZone);
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return asUtc - (ms - (((ms % 1000) + 1000) % 1000));
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function valid(ms: number): boolean {
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15;
}

/** Unix seconds as 'YYYY-MM-DD HH:mm:ss' in `timeZone`; '' for a missing or invalid time. */
export function formatTimestamp(seconds: number | null | undefined, timeZone: string): string {
  if (seconds === null || seconds === undefined || !valid(seconds * 1000)) return '';
  return formatInstant(seconds * 1000, timeZone);
}

/** An ISO date text (or milliseconds) as 'YYYY-MM-DD HH:mm:ss' in `timeZone`; '' when it does not parse. */
export function formatDateTime(value: string | number | Date, timeZone: string): string {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'number' ? value : Date.parse(value);
  return valid(ms) ? formatInstant(ms, timeZone) : '';
}

function formatInstant(ms: number, timeZone: string): string {
  const p = partsAt(ms, normalizeTimeZone(timeZone));
  return `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)} ${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}`;
}

/** Unix seconds as a `datetime-local` input value ('YYYY-MM-DDTHH:mm') in `timeZone`; '' when not set. */
export function toDateTimeLocal(seconds: number | null | undefined, timeZone: string): string {
  if (!seconds || !valid(seconds * 1000)) return '';
  const p = partsAt(seconds * 1000, normalizeTimeZone(timeZone));
  return `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)}T${pad(p.hour)}:${pad(p.minute)}`;
}

const LOCAL_RE = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$/;

/**
 * A wall-clock time entered in `timeZone` ('YYYY-MM-DDTHH:mm[:ss]', as a datetime-local input sends it) as unix
 * seconds; null when it does not parse. A time skipped by a DST change (spring forward) moves forward by the
 * gap, as browsers do; an ambiguous one (fall back) is the earlier instant.
 */
export function parseDateTimeLocal(value: unknown, timeZone: string): number | null {
  if (typeof value !== 'string') return null;
  const m = LOCAL_RE.exec(value.trim());
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1).map((x) => Number(x ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return null;
  const wall = Date.UTC(year, month - 1, day, hour, minute, second);
  if (!valid(wall) || new Date(wall).getUTCDate() !== day) return null;
  const zone = normalizeTimeZone(timeZone);
  // Offsets just before and after the wall time, as UTC: the candidates are wall - offset for each.
  const before = zoneOffsetMs(wall - 86_400_000, zone);
  const after = zoneOffsetMs(wall + 86_400_000, zone);
  const candidates = [wall - before, wall - after].filter((t) => t + zoneOffsetMs(t, zone) === wall);
  if (candidates.length > 0) return Math.floor(Math.min(...candidates) / 1000);
  // In a gap: the wall time does not exist; use the offset before the change (moves the time forward).
  return Math.floor((wall - before) / 1000);
}

/** The `tz` cookie's value from a Cookie header, when it names a known zone. */
export function timeZoneFromCookie(header: string | null | undefined): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== TIME_ZONE_COOKIE) continue;
    let raw = part.slice(eq + 1).trim();
    try {
      raw = decodeURIComponent(raw);
    } catch {
      return null;
    }
    return isTimeZone(raw) ? raw : null;
  }
  return null;
}

/** The zone of a request (the `tz` cookie), UTC until known. */
export function requestTimeZone(request: Request): string {
  return timeZoneFromCookie(request.headers.get('Cookie')) ?? DEFAULT_TIME_ZONE;
}

/** A Set-Cookie / document.cookie value keeping `timeZone` for a year (readable by the page's script). */
export function timeZoneCookie(timeZone: string): string {
  return `${TIME_ZONE_COOKIE}=${encodeURIComponent(timeZone)}; Path=/; Max-Age=${ONE_YEAR}; SameSite=Lax`;
}

/** The time zones offered in the preferences form (the runtime's list; UTC first). */
export function supportedTimeZones(): string[] {
  const list =
    typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : ['Asia/Shanghai'];
  return ['UTC', ...list.filter((z) => z !== 'UTC')];
}

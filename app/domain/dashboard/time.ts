/**
 * Calendar arithmetic of the data dashboard in an IANA time zone (the browser's, from the time-zone cookie, else
 * UTC): buckets of an hour, a day or an ISO week (Monday) start at the zone's local boundaries, as PostgreSQL's
 * date_trunc(..., timestamp AT TIME ZONE zone) computes them. Pure; shared by the server and the page.
 */
export type Granularity = 'hour' | 'day' | 'week';
export const GRANULARITIES: readonly Granularity[] = ['hour', 'day', 'week'];

export function isGranularity(v: unknown): v is Granularity {
  return v === 'hour' || v === 'day' || v === 'week';
}

/** A usable IANA zone name, else 'UTC'. */
export function safeTimeZone(tz: string | null | undefined): string {
  if (!tz || tz.length > 64) return 'UTC';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return tz;
  } catch {
    return 'UTC';
  }
}

type Parts = { year: number; month: number; day: number; hour: number; minute: number; second: number };

const formatters = new Map<string, Intl.DateTimeFormat>();
function partsIn(epochSec: number, tz: string): Parts {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(tz, f);
  }
  const out: Record<string, number> = {};
  for (const p of f.formatToParts(new Date(epochSec * 1000))) {
    if (p.type !== 'literal') out[p.type] = Number(p.value);
  }
  return out as Parts;
}

/** The zone's offset from UTC at an instant, in seconds. */
function offsetAt(epochSec: number, tz: string): number {
  const p = partsIn(epochSec, tz);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) / 1000 - epochSec;
}

/** The instant of a local wall-clock time in the zone (the earlier one in a DST overlap). */
export function fromLocal(p: Omit<Parts, 'second'> & { second?: number }, tz: string): number {
  const guess = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second ?? 0) / 1000;
  const first = guess - offsetAt(guess, tz);
  const second = guess - offsetAt(first, tz);
  return Math.min(first, second);
}

/** Start of the bucket holding `epochSec`. */
export function bucketStart(epochSec: number, g: Granularity, tz: string): number {
  const p = partsIn(epochSec, tz);
  // An hour is cut in real time at the offset of that instant (right in a DST overlap and in :30 zones too).
  if (g === 'hour') return epochSec - ((((epochSec + offsetAt(epochSec, tz)) % 3600) + 3600) % 3600);
  if (g === 'day') return fromLocal({ ...p, hour: 0, minute: 0, second: 0 }, tz);
  const weekday = new Date(Date.UTC(p.year, p.month - 1, p.day)).getUTCDay();
  const back = (weekday + 6) % 7;
  const monday = new Date(Date.UTC(p.year, p.month - 1, p.day - back));
  return fromLocal(
    {
      year: monday.getUTCFullYear(),
      month: monday.getUTCMonth() + 1,
      day: monday.getUTCDate(),
      hour: 0,
      minute: 0,
    },
    tz,
  );
}

const STEP: Record<Granularity, number> = { hour: 3600, day: 86_400, week: 7 * 86_400 };

/** Bucket starts covering [start, end]; at most `max` (null when there would be more). */
export function bucketStarts(
  start: number,
  end: number,
  g: Granularity,
  tz: string,
  max: number,
): number[] | null {
  const out: number[] = [];
  let at = bucketStart(start, g, tz);
  while (at <= end) {
    if (out.length >= max) return null;
    out.push(at);
    // A step and a half lands inside the next bucket whatever a DST change did; truncating finds its start
    // (a local midnight repeated by a DST overlap could lead back: then a plain step).
    const next = bucketStart(at + Math.round(STEP[g] * 1.5), g, tz);
    at = next > at ? next : at + STEP[g];
  }
  return out;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** `YYYY-MM-DDTHH:mm`, the value of an <input type="datetime-local"> in the zone. */
export function toLocalInput(epochSec: number, tz: string): string {
  const p = partsIn(epochSec, tz);
  return `${p.year}-${pad(p.month)}-${pad(p.day)}T${pad(p.hour)}:${pad(p.minute)}`;
}

/** Parses a datetime-local value (or a date) as wall-clock time in the zone; null when malformed. */
export function parseLocalInput(value: string, tz: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(value.trim());
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1).map((v) => Number(v ?? 0)) as number[];
  const check = new Date(Date.UTC(year!, month! - 1, day!, hour!, minute!, second!));
  if (
    check.getUTCFullYear() !== year ||
    check.getUTCMonth() !== month! - 1 ||
    check.getUTCDate() !== day ||
    hour! > 23 ||
    minute! > 59 ||
    second! > 59
  )
    return null;
  return fromLocal({ year: year!, month: month!, day: day!, hour: hour!, minute: minute!, second }, tz);
}

/** Axis and table label of a bucket: `MM-DD HH:00` for hours, `YYYY-MM-DD` for days and weeks. */
export function bucketLabel(epochSec: number, g: Granularity, tz: string): string {
  const p = partsIn(epochSec, tz);
  if (g === 'hour') return `${pad(p.month)}-${pad(p.day)} ${pad(p.hour)}:00`;
  return `${p.year}-${pad(p.month)}-${pad(p.day)}`;
}

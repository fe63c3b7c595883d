/**
 * Pure date/time helpers for the demo clock server, built on `Intl` only (IANA time zones, no
 * dependency). Inputs come from MCP clients, so every parser is strict and returns `undefined`
 * for anything it does not recognise.
 */

export interface LocalDateTime {
  year: number;
  month: number; // 1-12
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** One cached formatter per zone; `undefined` when the zone is not a valid IANA name. */
function formatterFor(timeZone: string): Intl.DateTimeFormat | undefined {
  const cached = formatters.get(timeZone);
  if (cached !== undefined) return cached;
  let formatter: Intl.DateTimeFormat;
  try {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'long',
    });
  } catch {
    return undefined;
  }
  if (formatters.size >= 512) formatters.clear(); // bounded: zone names come from clients
  formatters.set(timeZone, formatter);
  return formatter;
}

export function isValidTimeZone(timeZone: string): boolean {
  return formatterFor(timeZone) !== undefined;
}

/** Wall-clock fields and weekday of `instant` in `timeZone` (which must be valid). */
export function zonedParts(instant: Date, timeZone: string): LocalDateTime & { weekday: string } {
  const formatter = formatterFor(timeZone);
  if (formatter === undefined) throw new RangeError('invalid time zone');
  const parts: Record<string, string> = {};
  for (const part of formatter.formatToParts(instant)) parts[part.type] = part.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
    weekday: parts.weekday ?? '',
  };
}

/** UTC offset of `timeZone` at `instant`, in minutes (east positive). */
export function offsetMinutes(instant: Date, timeZone: string): number {
  const local = zonedParts(instant, timeZone);
  const asUtc = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second);
  return Math.round((asUtc - Math.floor(instant.getTime() / 1000) * 1000) / 60_000);
}

/** ISO-8601 local time with offset, e.g. `2026-03-29T03:30:00+02:00`. */
export function formatZoned(instant: Date, timeZone: string): string {
  const local = zonedParts(instant, timeZone);
  const offset = offsetMinutes(instant, timeZone);
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  return `${formatLocal(local)}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

export function formatLocal(local: LocalDateTime): string {
  return `${local.year}-${pad(local.month)}-${pad(local.day)}T${pad(local.hour)}:${pad(local.minute)}:${pad(local.second)}`;
}

/**
 * The instant at which `timeZone`'s wall clock shows `local`. In a DST gap the result is shifted
 * forward by the gap; in an overlap the earlier instant is chosen.
 */
export function zonedToInstant(local: LocalDateTime, timeZone: string): Date {
  const wall = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second);
  // Offsets a day either side bracket any transition near this wall time.
  const before = wall - offsetMinutes(new Date(wall - 86_400_000), timeZone) * 60_000;
  const after = wall - offsetMinutes(new Date(wall + 86_400_000), timeZone) * 60_000;
  const shows = (instant: number) => formatLocal(zonedParts(new Date(instant), timeZone)) === formatLocal(local);
  const matching = [before, after].filter(shows);
  // Overlap: both match, take the earlier. Gap: neither matches; the pre-transition offset lands
  // just after the transition, i.e. the wall time moved forward by the gap.
  return new Date(matching.length > 0 ? Math.min(...matching) : before);
}

/** Parses `YYYY-MM-DD`, rejecting impossible dates such as 2026-02-30. */
export function parseDate(text: string): { year: number; month: number; day: number } | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (match === null) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const check = new Date(Date.UTC(year, month - 1, day));
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return undefined;
  return { year, month, day };
}

/** Parses `YYYY-MM-DDTHH:MM[:SS]` (no offset: it is a wall-clock time). */
export function parseLocalDateTime(text: string): LocalDateTime | undefined {
  const match = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$/.exec(text);
  if (match === null) return undefined;
  const date = parseDate(match[1] ?? '');
  const [hour, minute, second] = [Number(match[2]), Number(match[3]), Number(match[4] ?? '0')];
  if (date === undefined || hour > 23 || minute > 59 || second > 59) return undefined;
  return { ...date, hour, minute, second };
}

/** Whole days from `from` to `to` (negative when `to` is earlier). */
export function daysBetween(from: { year: number; month: number; day: number }, to: typeof from): number {
  const start = Date.UTC(from.year, from.month - 1, from.day);
  const end = Date.UTC(to.year, to.month - 1, to.day);
  return Math.round((end - start) / 86_400_000);
}

function pad(value: number): string {
  return String(value).padStart(2, '0');
}

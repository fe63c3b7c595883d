import { describe, expect, it } from 'vitest';
import {
  daysBetween,
  formatZoned,
  isValidTimeZone,
  parseDate,
  parseLocalDateTime,
  zonedToInstant,
} from '../../demo/lib/time-zones.js';

describe('time zone helpers', () => {
  it.each([
    ['UTC', true],
    ['Europe/Paris', true],
    ['America/Argentina/Buenos_Aires', true],
    ['Mars/Olympus_Mons', false],
    ['', false],
  ])('treats %j as valid: %s', (zone, valid) => {
    expect(isValidTimeZone(zone)).toBe(valid);
  });

  it.each([
    ['2026-02-28', { year: 2026, month: 2, day: 28 }],
    ['2024-02-29', { year: 2024, month: 2, day: 29 }],
    ['2026-02-29', undefined],
    ['2026-13-01', undefined],
    ['26-01-01', undefined],
  ])('parses the date %j', (text, expected) => {
    expect(parseDate(text)).toEqual(expected);
  });

  it.each([
    ['2026-03-29T14:30', { year: 2026, month: 3, day: 29, hour: 14, minute: 30, second: 0 }],
    ['2026-03-29 14:30:15', { year: 2026, month: 3, day: 29, hour: 14, minute: 30, second: 15 }],
    ['2026-03-29T24:00', undefined],
    ['2026-03-29T14:30Z', undefined],
  ])('parses the wall-clock time %j', (text, expected) => {
    expect(parseLocalDateTime(text)).toEqual(expected);
  });

  it.each([
    ['2026-01-01', '2026-03-01', 59],
    ['2026-03-01', '2026-01-01', -59],
    ['2024-01-01', '2025-01-01', 366],
  ])('counts the days from %s to %s', (from, to, days) => {
    expect(daysBetween(parseDate(from)!, parseDate(to)!)).toBe(days);
  });

  it.each([
    // [wall time, zone, expected instant in UTC]
    ['2026-07-01T12:00', 'Europe/Paris', '2026-07-01T10:00:00.000Z'],
    ['2026-01-15T09:30', 'America/New_York', '2026-01-15T14:30:00.000Z'],
    ['2026-03-29T02:30', 'Europe/Berlin', '2026-03-29T01:30:00.000Z'], // in the spring gap: moved forward
    ['2026-10-25T02:30', 'Europe/Berlin', '2026-10-25T00:30:00.000Z'], // in the autumn overlap: the earlier one
  ])('finds the instant %s shows in %s', (wall, zone, utc) => {
    expect(zonedToInstant(parseLocalDateTime(wall)!, zone).toISOString()).toBe(utc);
  });

  it('formats a zoned time with its offset', () => {
    expect(formatZoned(new Date('2026-07-01T10:00:00Z'), 'Europe/Paris')).toBe('2026-07-01T12:00:00+02:00');
    expect(formatZoned(new Date('2026-07-01T10:00:00Z'), 'Asia/Kolkata')).toBe('2026-07-01T15:30:00+05:30');
  });
});

/** Media types as HTTP spells them, judged the same way for requests in and answers back. */

/** `application/json`, with or without parameters, case-insensitive. */
export function isJsonContentType(value: string | null): boolean {
  if (value === null) return false;
  const type = value.split(';', 1)[0]!.trim().toLowerCase();
  return type === 'application/json';
}

/** `text/event-stream`, with or without parameters, case-insensitive. */
export function isEventStreamContentType(value: string | null): boolean {
  if (value === null) return false;
  return value.split(';', 1)[0]!.trim().toLowerCase() === 'text/event-stream';
}

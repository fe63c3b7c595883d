/**
 * Demo MCP server over Streamable HTTP (both protocol eras on one path, 127.0.0.1 only): time
 * tools with IANA time zones.
 *
 *   node dist/demo/servers/clock-http.js [--port N] [--exit-with-stdin]
 *
 * prints `DEMO_READY http://127.0.0.1:PORT/mcp`. With `--exit-with-stdin` it also stops when its
 * stdin closes: the parent that spawned it with a stdin pipe is gone, however it went (even
 * SIGKILL), so the demo never leaves a clock server behind.
 */
import { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { serveBothEras } from '../lib/serve-both-eras.js';
import {
  daysBetween,
  formatLocal,
  formatZoned,
  isValidTimeZone,
  parseDate,
  parseLocalDateTime,
  zonedParts,
  zonedToInstant,
} from '../lib/time-zones.js';

const timeZone = z
  .string()
  .max(64)
  .refine(isValidTimeZone, { message: 'not an IANA time zone name (e.g. Europe/Paris)' });

const json = (value: unknown) => ({ content: [{ type: 'text' as const, text: JSON.stringify(value, null, 2) }] });

/** Builds one clock server instance (per 2025-era session or per 2026-era request). */
function createClockServer(): McpServer {
  const server = new McpServer(
    { name: 'clock', version: '1.0.0' },
    { capabilities: { tools: {} }, instructions: 'Time tools: current time, zone conversion, day counts.' },
  );

  server.registerTool(
    'current_time',
    {
      description: 'Current date and time, in an IANA time zone (default UTC)',
      inputSchema: z.object({ timezone: timeZone.optional() }),
      annotations: { readOnlyHint: true },
    },
    ({ timezone = 'UTC' }) => {
      const now = new Date();
      return json({ timezone, time: formatZoned(now, timezone), weekday: zonedParts(now, timezone).weekday, utc: now.toISOString() });
    },
  );

  server.registerTool(
    'convert_time',
    {
      description: 'Converts a wall-clock time (YYYY-MM-DDTHH:MM[:SS]) from one IANA time zone to another',
      inputSchema: z.object({ time: z.string().max(32), from_timezone: timeZone, to_timezone: timeZone }),
      annotations: { readOnlyHint: true },
    },
    ({ time, from_timezone, to_timezone }) => {
      const local = parseLocalDateTime(time);
      if (local === undefined) {
        return { content: [{ type: 'text', text: 'time must look like 2026-03-29T14:30' }], isError: true };
      }
      const instant = zonedToInstant(local, from_timezone);
      return json({
        from: { timezone: from_timezone, time: formatZoned(instant, from_timezone) },
        to: { timezone: to_timezone, time: formatZoned(instant, to_timezone) },
        requested: formatLocal(local),
      });
    },
  );

  server.registerTool(
    'days_between',
    {
      description: 'Whole days from one date (YYYY-MM-DD) to another; negative when the second is earlier',
      inputSchema: z.object({ from: z.string().max(10), to: z.string().max(10) }),
      annotations: { readOnlyHint: true },
    },
    ({ from, to }) => {
      const start = parseDate(from);
      const end = parseDate(to);
      if (start === undefined || end === undefined) {
        return { content: [{ type: 'text', text: 'dates must be real calendar dates like 2026-02-28' }], isError: true };
      }
      return json({ from, to, days: daysBetween(start, end) });
    },
  );

  return server;
}

function parseArgv(argv: readonly string[]): { port: number; exitWithStdin: boolean } | undefined {
  let port = 0;
  let exitWithStdin = false;
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === '--exit-with-stdin') exitWithStdin = true;
    else if (argv[i] === '--port') {
      port = Number(argv[(i += 1)]);
      if (!Number.isInteger(port) || port < 0 || port > 65535) return undefined;
    } else return undefined;
  }
  return { port, exitWithStdin };
}

async function main(): Promise<void> {
  const args = parseArgv(process.argv.slice(2));
  if (args === undefined) {
    process.stderr.write('usage: clock-http [--port N] [--exit-with-stdin]\n');
    process.exit(2);
  }
  const { port } = args;
  const server = await serveBothEras({
    factory: () => createClockServer(),
    port,
    onerror: (error) => process.stderr.write(`[clock] ${error.message}\n`),
  });
  process.stdout.write(`DEMO_READY ${server.url}\n`);
  const shutdown = (): void => {
    void server.close().finally(() => process.exit(0));
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
  if (args.exitWithStdin) {
    process.stdin.once('close', shutdown).resume();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`[clock] ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

/**
 * Start-up progress for a person watching: while the registry connects its servers, every few
 * seconds one log line names the servers still starting and for how long
 * (`still starting: files (10 s)`), so a first `npx -y` download that takes a while is visibly
 * under way rather than a silent terminal. Stops when the start has finished, either way.
 * Servers reached per principal have no start-up connection and are never listed.
 */
import type { Logger } from '../observability/logger.js';
import type { UpstreamRegistry } from '../upstream/registry.js';

/** How often the still-starting line is written (the first one after this long). */
export const START_PROGRESS_INTERVAL_MS = 5_000;

const STARTING = new Set(['idle', 'connecting']);

/** Logs progress until the returned stop is called; the timer never keeps the process alive. */
export function reportStartProgress(registry: UpstreamRegistry, logger: Logger, intervalMs = START_PROGRESS_INTERVAL_MS): () => void {
  const began = Date.now();
  const starting = () =>
    [...registry.entries.values()].filter((entry) => entry.reach !== 'perPrincipal' && STARTING.has(entry.primary.state)).map((entry) => entry.name);
  const names = starting();
  if (names.length > 0) logger.info({ servers: names }, `starting ${names.length} server(s): ${names.join(', ')}`);
  const timer = setInterval(() => {
    const waiting = starting();
    if (waiting.length === 0) return;
    const seconds = Math.round((Date.now() - began) / 1000);
    logger.info({ servers: waiting, seconds }, `still starting: ${waiting.map((name) => `${name} (${seconds} s)`).join(', ')}`);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

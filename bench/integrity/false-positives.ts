/**
 * The tool-integrity scanner's false-positive rate on real servers: every tool of the project's
 * recording of 37 npm MCP servers (bench/search/data/real-servers.json, 1,403 tools) scanned as
 * one catalogue — the worst case for the cross-server checks, since every server is "another
 * server" to every other — with each flagged tool listed and explained. These are published
 * servers' own tool lists, so every flag on them is taken for a false positive. Also: how long a
 * whole-catalogue scan takes. Method: docs/performance.md, "Tool integrity".
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { pinnedDefinition } from '../../src/integrity/definition.js';
import { compileScanCatalogue, scanTool, type Flag } from '../../src/integrity/scanner.js';
import { median } from '../lib/stats.js';
import type { Target } from '../lib/summary.js';
import { renderTable } from '../lib/table.js';

/** The repository root, whether this runs compiled (dist/bench/integrity/) or from source (bench/integrity/). */
const HERE = fileURLToPath(new URL('.', import.meta.url));
const ROOT = HERE.includes('/dist/bench/') ? HERE.slice(0, HERE.lastIndexOf('/dist/bench/') + 1) : fileURLToPath(new URL('../../', import.meta.url));
const RECORDING = `${ROOT}bench/search/data/real-servers.json`;

export const INTEGRITY_TARGETS = { falsePositiveRate: 0.01 } as const;

interface Recording {
  servers: Array<{ server: string; tools: Array<{ name: string } & Record<string, unknown>> }>;
}

export interface IntegrityReport {
  servers: number;
  tools: number;
  flagged: Array<{ server: string; tool: string; flags: Flag[] }>;
  /** Wall time of compiling the catalogue and scanning every tool once, per round, ms. */
  scanMs: number[];
}

/** Scans the recording `rounds` times (timing each pass) and keeps the flags of the last one. */
export function runIntegrityBenchmark(options: { rounds: number; recording?: string }): IntegrityReport {
  const recording = JSON.parse(readFileSync(options.recording ?? RECORDING, 'utf8')) as Recording;
  const servers = new Map(recording.servers.map((s) => [s.server, s.tools.map((t) => t.name)]));
  const tools = recording.servers.reduce((n, s) => n + s.tools.length, 0);
  const scanMs: number[] = [];
  let flagged: IntegrityReport['flagged'] = [];
  for (let round = 0; round < Math.max(1, options.rounds); round++) {
    const started = performance.now();
    const catalogue = compileScanCatalogue({ separator: '__', servers });
    const found: IntegrityReport['flagged'] = [];
    for (const { server, tools: list } of recording.servers) {
      for (const tool of list) {
        const flags = scanTool(pinnedDefinition(tool), server, catalogue);
        if (flags.length > 0) found.push({ server, tool: tool.name, flags });
      }
    }
    scanMs.push(performance.now() - started);
    flagged = found;
  }
  return { servers: servers.size, tools, flagged, scanMs };
}

const pct = (x: number) => `${(x * 100).toFixed(2)}%`;

export function integrityTargets(report: IntegrityReport): Target[] {
  const rate = report.flagged.length / Math.max(1, report.tools);
  return [
    {
      name: `tool-integrity scanner false positives ≤ ${pct(INTEGRITY_TARGETS.falsePositiveRate)} on real servers`,
      measured: `${report.flagged.length} of ${report.tools} tools (${pct(rate)}) of ${report.servers} servers`,
      met: rate <= INTEGRITY_TARGETS.falsePositiveRate,
    },
  ];
}

export function renderIntegrityReport(report: IntegrityReport, format: 'text' | 'markdown'): string {
  const title = format === 'markdown' ? '### Tool integrity: the scanner on real servers' : 'Tool integrity: the scanner on real servers';
  const summary = `${report.flagged.length} of ${report.tools} tools of ${report.servers} servers flagged (${pct(report.flagged.length / Math.max(1, report.tools))}); a whole-catalogue scan takes ${median(report.scanMs).toFixed(1)} ms (median of ${report.scanMs.length})`;
  const rows = report.flagged.map((f) => [f.server, f.tool, f.flags.map((flag) => `${flag.kind} at ${flag.where}: ${flag.detail}`).join('; ')]);
  const table = rows.length === 0 ? '' : `\n${renderTable([{ title: 'server' }, { title: 'tool' }, { title: 'why flagged' }], rows, format)}`;
  return `${title}\n\n${summary}${table}`;
}

/**
 * The admin page as HTML: one document served by the gateway itself (no build step, nothing from
 * another origin) — the sections' empty tables, the status it was served with as inert JSON, the
 * chart library (chart-assets.ts) and the page's own script (admin-script.ts), which draws every
 * section from that status and keeps it live. Only the nonced scripts and styles run (the page's
 * Content-Security-Policy, admin-routes.ts); every value from the gateway or an upstream reaches
 * the document as text, never as markup: the two served here are escaped, the script writes
 * nothing but `textContent`. Pure: status in, text out.
 */
import { WINDOW_MINUTES } from '../observability/server-activity.js';
import { ADMIN_SCRIPT } from './admin-script.js';
import { INTEGRITY_SCRIPT } from './integrity-script.js';
import type { AdminStatus } from './admin-status.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => ESCAPES[char]!);
}

/**
 * JSON for a `<script type="application/json">` block: `<`, `>` and `&` (and the two line
 * separators) as `\uXXXX` escapes, so no value can close the block (`</script>`) or open a
 * comment; JSON.parse reads them back unchanged.
 */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Where the page's script reads and writes: all on the gateway's own origin. */
export interface AdminPageUrls {
  readonly status: string;
  readonly reload: string;
  readonly toggle: string;
  /** The customisation list's watch stream (`<path>/customizations?watch=1`). */
  readonly watch: string;
  readonly chartScript: string;
  readonly chartStylesheet: string;
  /** `<path>/integrity` when tool integrity is on (the "Held tool changes" section); absent: no section. */
  readonly integrity?: string;
}

const STYLE = `body{font:14px/1.45 system-ui,sans-serif;margin:1.5em 2em;color:#1f2328;max-width:110em}
h1{margin:.2em 0}h2{margin:1.4em 0 .3em;font-size:1.2em}p{margin:.35em 0}
table.grid{border-collapse:collapse;margin:.4em 0 1em}.grid td,.grid th{border:1px solid #d0d7de;padding:.25em .6em;text-align:left;vertical-align:top}
.grid th{background:#f6f8fa;font-weight:600}.grid .num{text-align:right;font-variant-numeric:tabular-nums}
code{font:12.5px ui-monospace,monospace;background:#f6f8fa;padding:.05em .3em;border-radius:3px;word-break:break-all}
.note{color:#57606a;font-size:13px}button{font:inherit;padding:.3em .9em;cursor:pointer}
[data-state=ready],[data-state=authRequired]{color:#1a7f37}[data-state=error],[data-state=closed]{color:#b42318}
[data-state=connecting],[data-state=idle]{color:#9a6700}.error-count{color:#b42318;font-weight:600}
#live{padding:.1em .6em;border-radius:1em;background:#eaeef2;font-size:12.5px}
#live[data-live=live]{background:#dafbe1;color:#1a7f37}#live[data-live=offline],#live[data-live=refused]{background:#ffebe9;color:#b42318}
#reload-outcome,#toggle-outcome{margin-left:1em}#charts{display:flex;flex-wrap:wrap;gap:1em 2em;margin:.5em 0 1em}
figure{margin:0}figcaption{font-weight:600;margin-bottom:.2em}.uplot{font-family:inherit}
.held{border:1px solid #d0d7de;border-radius:6px;padding:.2em 1em;margin:.6em 0}.held h3{font-size:1em;margin:.4em 0}
table.diff{border-collapse:collapse;font:12.5px ui-monospace,monospace;margin:.3em 0}.diff td{padding:0 .5em;white-space:pre-wrap;word-break:break-all}
.diff tr.add{background:#dafbe1}.diff tr.del{background:#ffebe9}.flags{color:#b42318;margin:.2em 0}`;

const head = (columns: ReadonlyArray<string | [string, 'num']>) =>
  `<thead><tr>${columns.map((c) => (typeof c === 'string' ? `<th>${c}</th>` : `<th class="num">${c[0]}</th>`)).join('')}</tr></thead>`;

export function renderAdminPage(status: AdminStatus, options: { nonce: string; urls: AdminPageUrls }): string {
  const { nonce, urls } = options;
  const title = `${escapeHtml(status.gateway.name)} — admin`;
  const metrics = status.gateway.metricsPath === undefined ? '' : ` · <a id="metrics-link" href="${escapeHtml(status.gateway.metricsPath)}">Prometheus metrics</a>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${escapeHtml(urls.chartStylesheet)}" nonce="${nonce}">
<style nonce="${nonce}">${STYLE}</style></head>
<body>
<h1>${title}</h1>
<p>Portcullis ${escapeHtml(status.gateway.version)} · MCP URL <code id="mcp-url">${escapeHtml(status.gateway.mcpUrl)}</code>${metrics} · <span id="live" data-live="starting">starting…</span></p>
<noscript><p>This page draws itself with JavaScript. Its data is <code>GET admin/status</code> (JSON).</p></noscript>
<p><button id="reload" type="button">Reload configuration</button><span id="reload-outcome"></span></p>
<p id="last-reload"></p>
<h2>Servers</h2>
<table class="grid" id="servers">${head(['server', 'state', 'transport', 'mode', 'isolation', 'upstream says', ['child processes', 'num'], ['restarts', 'num'], 'last error', 'side channel URL'])}<tbody></tbody></table>
<h2>What a client sees</h2>
<p id="view-note"></p>
<table class="grid" id="shown">${head(['server', ['tools listed', 'num'], ['deferred', 'num'], ['hidden', 'num'], ['upstream lists', 'num'], ['prompts', 'num'], ['resources', 'num'], ['templates', 'num']])}<tbody></tbody></table>
<p class="note"><b>tools listed</b>: in <code>tools/list</code>; <b>deferred</b>: reachable through <code>search_tools</code> and <code>call_tool</code> only; <b>hidden</b>: removed by the server's tool filters, the policy's denied tools or the access rules; <b>upstream lists</b>: what the server itself lists.</p>
<h2>Traffic, last ${WINDOW_MINUTES} minutes</h2>
<p class="note">Requests each server served (its tool calls, prompt gets and resource reads, and every request of its side channel) as the gateway measured them; the latencies are those of the whole request at the gateway, within about 10% (read from fixed bins). <code>/metrics</code> has the same samples since start.</p>
<table class="grid" id="traffic">${head(['server', ['requests', 'num'], ['errors', 'num'], ['p50', 'num'], ['p95', 'num']])}<tbody></tbody></table>
<div id="charts"></div>
<h2>Sessions</h2>
<p class="note">2025-era clients hold sessions (counted per endpoint); 2026-07-28 clients are sessionless.</p>
<table class="grid" id="sessions">${head(['endpoint', ['2025-era sessions', 'num']])}<tbody></tbody></table>
<h2>Customisations</h2>
<p class="note">Global enablement: a server disabled globally is stopped, for every caller.<span id="toggle-outcome"></span></p>
<table class="grid" id="customizations">${head(['name', 'type', 'state', 'global', ''])}<tbody></tbody></table>
${urls.integrity === undefined ? '' : '<h2>Held tool changes</h2>\n<div id="integrity"></div>\n'}<h2>Recent audit lines</h2>
<p class="note">The latest audit lines, newest first (at most 100, held in memory; the audit log itself is the record).</p>
<table class="grid" id="audit">${head(['time', 'principal', 'endpoint', 'method', 'server', 'tool / prompt / uri', 'decision', 'outcome'])}<tbody></tbody></table>
<script type="application/json" id="admin-data">${scriptJson({ status, urls })}</script>
<script src="${escapeHtml(urls.chartScript)}" nonce="${nonce}"></script>
<script nonce="${nonce}">${ADMIN_SCRIPT}</script>
${urls.integrity === undefined ? '' : `<script nonce="${nonce}">${INTEGRITY_SCRIPT}</script>`}
</body></html>
`;
}

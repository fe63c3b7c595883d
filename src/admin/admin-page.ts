/**
 * The admin page as HTML: one self-contained document (no build step, no external asset), every
 * value escaped, one small script (under a per-response nonce, the only script the page's
 * Content-Security-Policy allows) behind the reload button. Pure: status in, text out.
 */
import type { AdminStatus } from './admin-status.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => ESCAPES[char]!);
}

const cell = (value: string | number | undefined) => `<td>${value === undefined ? '—' : escapeHtml(String(value))}</td>`;

function serverRows(status: AdminStatus): string {
  if (status.servers.length === 0) return '<tr><td colspan="8">no servers configured</td></tr>';
  return status.servers
    .map(
      (s) =>
        `<tr data-server="${escapeHtml(s.name)}">${cell(s.name)}<td class="state state-${escapeHtml(s.state)}">${escapeHtml(s.state)}</td>${cell(s.transport)}${cell(s.mode)}${cell(s.isolation)}${cell(s.tools)}${cell(s.restarts)}${cell(s.lastError)}</tr>`,
    )
    .join('\n');
}

function sessionRows(status: AdminStatus): string {
  return status.sessions.map((s) => `<tr data-endpoint="${escapeHtml(s.endpoint)}">${cell(s.endpoint)}${cell(s.legacy)}</tr>`).join('\n');
}

function customizationRows(status: AdminStatus): string {
  if (status.customizations.length === 0) return '<tr><td colspan="3">none</td></tr>';
  return status.customizations.map((c) => `<tr>${cell(c.name)}${cell(c.type)}${cell(c.state)}</tr>`).join('\n');
}

function lastReload(status: AdminStatus): string {
  const r = status.lastReload;
  if (r === undefined) return 'no reload since the gateway started';
  if (!r.applied) return `${r.at}: refused — ${r.problems.join('; ')}`;
  const parts = [`restarted: ${r.restarted.join(', ') || 'none'}`, `re-filtered: ${r.refiltered.join(', ') || 'none'}`];
  if (r.failed.length > 0) parts.push(`did not come back: ${r.failed.join(', ')}`);
  return `${r.at}: applied — ${parts.join('; ')}`;
}

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:.5em 0 1.5em}
td,th{border:1px solid #ccc;padding:.3em .7em;text-align:left}th{background:#f3f3f3}.state-ready{color:#1a7f37}
.state-error,.state-closed{color:#b42318}.state-connecting,.state-idle{color:#9a6700}button{font:inherit;padding:.4em 1em}
#reload-outcome{margin-left:1em}`;

/** The reload button posts JSON (a form cannot, so a cross-site page cannot press it) and shows the outcome; refreshing shows the new state. */
function script(reloadUrl: string): string {
  return `document.getElementById('reload').addEventListener('click', async () => {
  const out = document.getElementById('reload-outcome');
  out.textContent = 'reloading…';
  try {
    const answer = await fetch(${JSON.stringify(reloadUrl)}, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const body = await answer.json();
    out.textContent = body.applied
      ? 'reloaded (restarted: ' + (body.restarted.join(', ') || 'none') + '; re-filtered: ' + (body.refiltered.join(', ') || 'none') + '); refresh to see the new state'
      : 'refused: ' + (body.problems || [body.error && body.error.message]).join('; ');
    out.dataset.outcome = body.applied ? 'applied' : 'refused';
  } catch (error) {
    out.textContent = 'reload failed: ' + error;
    out.dataset.outcome = 'failed';
  }
});`;
}

export function renderAdminPage(status: AdminStatus, options: { reloadUrl: string; nonce: string }): string {
  const title = `${escapeHtml(status.gateway.name)} — admin`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style nonce="${options.nonce}">${STYLE}</style></head>
<body>
<h1>${title}</h1>
<p>Portcullis ${escapeHtml(status.gateway.version)}. <button id="reload" type="button">Reload configuration</button><span id="reload-outcome"></span></p>
<p id="last-reload">Last reload: ${escapeHtml(lastReload(status))}</p>
<h2>Servers</h2>
<table id="servers"><thead><tr><th>server</th><th>state</th><th>transport</th><th>mode</th><th>isolation</th><th>tools</th><th>restarts</th><th>last error</th></tr></thead>
<tbody>
${serverRows(status)}
</tbody></table>
<h2>Sessions</h2>
<p>2025-era clients hold sessions (counted per endpoint); 2026-07-28 clients are sessionless.</p>
<table id="sessions"><thead><tr><th>endpoint</th><th>2025-era sessions</th></tr></thead>
<tbody>
${sessionRows(status)}
</tbody></table>
<h2>Customisations</h2>
<table id="customizations"><thead><tr><th>name</th><th>type</th><th>state</th></tr></thead>
<tbody>
${customizationRows(status)}
</tbody></table>
<script nonce="${options.nonce}">${script(options.reloadUrl)}</script>
</body></html>
`;
}

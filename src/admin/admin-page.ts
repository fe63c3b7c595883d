/**
 * The admin page as HTML: one self-contained document (no build step, no external asset), every
 * value escaped, one small script (under a per-response nonce, the only script the page's
 * Content-Security-Policy allows) behind the reload button and the customisations' global
 * toggles (main's `POST <path>/customizations/toggle`, scope `global`). Pure: status in, text out.
 */
import type { AuditEntry } from '../observability/audit-ring.js';
import type { AdminCustomization, AdminStatus } from './admin-status.js';

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

function toggleCell(c: AdminCustomization): string {
  if (c.globallyEnabled === undefined) return '<td>—</td>';
  const label = c.globallyEnabled ? 'Disable' : 'Enable';
  return `<td><button class="toggle" type="button" data-id="${escapeHtml(c.id)}" data-enabled="${String(c.globallyEnabled)}">${label}</button></td>`;
}

function customizationRows(status: AdminStatus): string {
  if (status.customizations.length === 0) return '<tr><td colspan="4">none</td></tr>';
  return status.customizations
    .map((c) => `<tr data-customization="${escapeHtml(c.name)}">${cell(c.name)}${cell(c.type)}${cell(c.state)}${cell(c.globallyEnabled === undefined ? undefined : c.globallyEnabled ? 'enabled' : 'disabled')}${toggleCell(c)}</tr>`)
    .join('\n');
}

const field = (entry: AuditEntry, name: string): string | undefined => {
  const value = entry[name];
  return value === null || value === undefined ? undefined : String(value);
};

function outcomeOf(entry: AuditEntry): string {
  if (entry.outcome !== 'error') return field(entry, 'outcome') ?? '—';
  const detail = field(entry, 'reason') ?? field(entry, 'errorCode') ?? field(entry, 'status');
  return detail === undefined ? 'error' : `error ${detail}`;
}

function auditRows(status: AdminStatus): string {
  if (status.audit === undefined) return '<tr><td colspan="8">the audit log is off (set <code>audit</code> in the config to record and show calls)</td></tr>';
  if (status.audit.length === 0) return '<tr><td colspan="8">no audited request yet</td></tr>';
  return status.audit
    .map((e) => {
      const target = field(e, 'tool') ?? field(e, 'prompt') ?? field(e, 'uri');
      return `<tr class="audit" data-decision="${escapeHtml(String(e.decision))}">${cell(field(e, 'time'))}${cell(field(e, 'principal'))}${cell(field(e, 'endpoint'))}${cell(field(e, 'method'))}${cell(field(e, 'server'))}${cell(target)}${cell(field(e, 'decision'))}${cell(outcomeOf(e))}</tr>`;
    })
    .join('\n');
}

function lastReload(status: AdminStatus): string {
  const r = status.lastReload;
  if (r === undefined) return 'no reload since the gateway started';
  if (!r.applied) return `${r.at}: refused — ${r.problems.join('; ')}`;
  const parts = [`restarted: ${r.restarted.join(', ') || 'none'}`, `re-filtered: ${r.refiltered.join(', ') || 'none'}`];
  if (r.added.length > 0) parts.push(`added: ${r.added.join(', ')}`);
  if (r.removed.length > 0) parts.push(`removed: ${r.removed.join(', ')}`);
  if (r.failed.length > 0) parts.push(`did not come back: ${r.failed.join(', ')}`);
  return `${r.at}: applied — ${parts.join('; ')}`;
}

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:.5em 0 1.5em}
td,th{border:1px solid #ccc;padding:.3em .7em;text-align:left}th{background:#f3f3f3}.state-ready,.state-authRequired{color:#1a7f37}
.state-error,.state-closed{color:#b42318}.state-connecting,.state-idle{color:#9a6700}button{font:inherit;padding:.4em 1em}
#reload-outcome,#toggle-outcome{margin-left:1em}`;

/**
 * The buttons post JSON (a form cannot, so a cross-site page cannot press them) and show the
 * outcome; refreshing shows the new state. A toggle's refusal (the toggle route checks the
 * policy's `admins`) is shown as its error message.
 */
function script(reloadUrl: string, toggleUrl: string): string {
  return `const postJson = async (url, body) => {
  const answer = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { ok: answer.ok, body: await answer.json() };
};
document.getElementById('reload').addEventListener('click', async () => {
  const out = document.getElementById('reload-outcome');
  out.textContent = 'reloading…';
  try {
    const { body } = await postJson(${JSON.stringify(reloadUrl)}, {});
    out.textContent = body.applied
      ? 'reloaded (' + (body.added.length > 0 ? 'added: ' + body.added.join(', ') + '; ' : '') + 'restarted: ' + (body.restarted.join(', ') || 'none') + '; re-filtered: ' + (body.refiltered.join(', ') || 'none') + '); refresh to see the new state'
      : 'refused: ' + (body.problems || [body.error && body.error.message]).join('; ');
    out.dataset.outcome = body.applied ? 'applied' : 'refused';
  } catch (error) {
    out.textContent = 'reload failed: ' + error;
    out.dataset.outcome = 'failed';
  }
});
for (const button of document.querySelectorAll('button.toggle')) {
  button.addEventListener('click', async () => {
    const out = document.getElementById('toggle-outcome');
    const enabled = button.dataset.enabled !== 'true';
    out.textContent = 'saving…';
    delete out.dataset.outcome;
    try {
      const { ok, body } = await postJson(${JSON.stringify(toggleUrl)}, { id: button.dataset.id, enabled, scope: 'global' });
      if (!ok) throw new Error((body.error && body.error.message) || 'refused');
      out.textContent = (enabled ? 'enabled' : 'disabled') + ' globally; refresh to see its state';
      out.dataset.outcome = 'applied';
      button.dataset.enabled = String(enabled);
      button.textContent = enabled ? 'Disable' : 'Enable';
      button.closest('tr').children[3].textContent = enabled ? 'enabled' : 'disabled';
    } catch (error) {
      out.textContent = 'toggle refused: ' + error.message;
      out.dataset.outcome = 'refused';
    }
  });
}`;
}

export function renderAdminPage(status: AdminStatus, options: { reloadUrl: string; toggleUrl: string; nonce: string }): string {
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
<p>Global enablement: a server disabled globally is stopped, for every caller.<span id="toggle-outcome"></span></p>
<table id="customizations"><thead><tr><th>name</th><th>type</th><th>state</th><th>global</th><th></th></tr></thead>
<tbody>
${customizationRows(status)}
</tbody></table>
<h2>Recent audit lines</h2>
<p>The latest audit lines, newest first (at most 100, held in memory; the audit log itself is the record).</p>
<table id="audit"><thead><tr><th>time</th><th>principal</th><th>endpoint</th><th>method</th><th>server</th><th>tool / prompt / uri</th><th>decision</th><th>outcome</th></tr></thead>
<tbody>
${auditRows(status)}
</tbody></table>
<script nonce="${options.nonce}">${script(options.reloadUrl, options.toggleUrl)}</script>
</body></html>
`;
}

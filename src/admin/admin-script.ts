/**
 * The admin page's own script (run under the page's nonce, admin-page.ts). It draws every section
 * from a status (admin-status.ts: first the one embedded in the page, then fresh ones from
 * `GET admin/status`) and keeps the page live without reloading it:
 *
 * - the customisation list's watch stream (`<path>/customizations?watch=1`) says at once when a
 *   server's state or an enablement decision changes, and the page then fetches a fresh status;
 * - what that stream does not carry (tool counts, requests, latencies, children, sessions, audit
 *   lines) is fetched every {@link REFRESH_MS}, only while the page is visible: a hidden tab
 *   neither polls nor holds a watch stream (the gateway serves a bounded number of them);
 * - the buttons post JSON (a form cannot, so another site cannot press them) and refresh.
 *
 * Bounded in the browser: each refresh replaces what it shows (the gateway sends the last minutes
 * whole, the page keeps no history), audit rows are capped at 100, one chart per server.
 * Everything from the gateway is written with `textContent`, never parsed as HTML.
 */

/** How often a visible page fetches what the watch stream does not carry. */
export const REFRESH_MS = 5_000;

export const ADMIN_SCRIPT = `'use strict';
(() => {
  const REFRESH_MS = ${REFRESH_MS};
  const MAX_AUDIT_ROWS = 100;
  const data = JSON.parse(document.getElementById('admin-data').textContent);
  const urls = data.urls;
  const byId = (id) => document.getElementById(id);

  const node = (tag, text, className) => {
    const made = document.createElement(tag);
    if (text !== undefined && text !== null) made.textContent = String(text);
    if (className !== undefined) made.className = className;
    return made;
  };
  const cell = (value) => node('td', value === undefined || value === null ? '—' : value);
  const num = (value) => node('td', value === undefined || value === null ? '—' : value, 'num');
  const row = (cells, key, value) => {
    const tr = document.createElement('tr');
    if (key !== undefined) tr.dataset[key] = value;
    tr.append(...cells);
    return tr;
  };
  const fill = (table, rows, empty) => {
    const body = byId(table).tBodies[0];
    if (rows.length > 0) return body.replaceChildren(...rows);
    const td = node('td', empty);
    td.colSpan = byId(table).tHead.rows[0].cells.length;
    body.replaceChildren(row([td]));
  };
  const ms = (value) => {
    if (value === undefined || value === null) return '—';
    if (value >= 1000) return (value / 1000).toFixed(value >= 10000 ? 0 : 2) + ' s';
    return (value >= 10 ? value.toFixed(0) : value >= 1 ? value.toFixed(1) : value.toFixed(2)) + ' ms';
  };

  const live = byId('live');
  const setLive = (state, text) => {
    live.dataset.live = state;
    live.textContent = text;
  };

  function lastReload(r) {
    if (r === undefined || r === null) return 'no reload since the gateway started';
    if (!r.applied) return r.at + ': refused — ' + r.problems.join('; ');
    const parts = ['restarted: ' + (r.restarted.join(', ') || 'none'), 're-filtered: ' + (r.refiltered.join(', ') || 'none')];
    if (r.added.length > 0) parts.push('added: ' + r.added.join(', '));
    if (r.removed.length > 0) parts.push('removed: ' + r.removed.join(', '));
    if (r.failed.length > 0) parts.push('did not come back: ' + r.failed.join(', '));
    return r.at + ': applied — ' + parts.join('; ');
  }

  function upstreamSays(info) {
    const td = cell(info === undefined ? undefined : [info.title || info.name, info.version].filter(Boolean).join(' '));
    if (info !== undefined && info.description !== undefined) td.title = info.description;
    return td;
  }

  function drawServers(status) {
    fill('servers', status.servers.map((s) => {
      const state = cell(s.state);
      state.dataset.state = s.state;
      const channel = document.createElement('td');
      channel.append(node('code', s.sideChannel));
      return row([cell(s.name), state, cell(s.transport), cell(s.mode), cell(s.isolation), upstreamSays(s.upstream), num(s.children), num(s.restarts), cell(s.lastError), channel], 'server', s.name);
    }), 'no servers configured');
  }

  function drawShown(status) {
    const view = status.view;
    const who = view.principal === undefined ? 'any client of this gateway sees them (no auth: every client is the same caller)' : 'principal ' + view.principal + ' (you) sees them';
    byId('view-note').textContent = 'Counted as ' + who + ' on the aggregate endpoint, ' + status.gateway.mcpUrl +
      ', listing as a 2026-era request does (no workspace, no deferTools option).' + (view.counted ? '' : ' Not counted yet (a server is still answering); trying again.');
    fill('shown', status.servers.map((s) => {
      const seen = s.shown;
      if (seen === undefined || seen.unavailable) {
        const why = cell(seen === undefined ? (view.counted ? 'not shown to this caller' : 'not counted yet') : 'unavailable: its lists could not be read just now');
        why.colSpan = 7;
        return row([cell(s.name), why], 'server', s.name);
      }
      const hidden = s.upstreamTools === undefined ? undefined : Math.max(0, s.upstreamTools - seen.tools - seen.deferredTools);
      return row([cell(s.name), num(seen.tools), num(seen.deferredTools), num(hidden), num(s.upstreamTools), num(seen.prompts), num(seen.resources), num(seen.resourceTemplates)], 'server', s.name);
    }), 'no servers configured');
  }

  const charts = new Map();
  function chartData(activity) {
    const minutes = activity.minutes;
    // A quiet minute draws no bar (null), rather than a line along the axis.
    const bar = (value) => (value === 0 ? null : value);
    return [minutes.map((m) => m.at), minutes.map((m) => bar(m.requests)), minutes.map((m) => bar(m.errors)), minutes.map((m) => m.p95Ms)];
  }
  function newChart(server) {
    const figure = node('figure');
    figure.dataset.server = server;
    figure.append(node('figcaption', server));
    byId('charts').append(figure);
    const bars = uPlot.paths.bars({ size: [0.7, 40] });
    const plot = new uPlot({
      width: 440,
      height: 170,
      cursor: { drag: { x: false, y: false } },
      // A key, not a read-out: the table above has the numbers.
      legend: { live: false },
      scales: {
        // Half a minute either side, so the first and the current minute's bars are whole.
        x: { time: true, range: (u, min, max) => [min - 30, max + 30] },
        n: { range: (u, min, max) => [0, Math.max(4, max)] },
        ms: { range: (u, min, max) => [0, Math.max(1, max === null ? 1 : max * 1.1)] },
      },
      axes: [
        { space: 60 },
        { scale: 'n', label: 'requests / min', size: 48 },
        { scale: 'ms', side: 1, label: 'p95 (ms)', size: 52, grid: { show: false } },
      ],
      series: [
        {},
        { label: 'requests', scale: 'n', stroke: '#0969da', fill: 'rgba(9,105,218,0.25)', paths: bars, points: { show: false } },
        { label: 'errors', scale: 'n', stroke: '#cf222e', fill: 'rgba(207,34,46,0.55)', paths: bars, points: { show: false } },
        { label: 'p95', scale: 'ms', stroke: '#bc4c00', width: 2, spanGaps: false, value: (u, v) => ms(v) },
      ],
    }, [[], [], [], []], figure);
    return { figure, plot };
  }
  function drawTraffic(status) {
    fill('traffic', status.servers.map((s) => {
      const a = s.activity;
      const errors = num(a.errors);
      if (a.errors > 0) errors.classList.add('error-count');
      return row([cell(s.name), num(a.requests), errors, num(ms(a.p50Ms)), num(ms(a.p95Ms))], 'server', s.name);
    }), 'no servers configured');
    const busy = new Set(status.servers.filter((s) => s.activity.requests > 0).map((s) => s.name));
    for (const [server, chart] of charts) {
      if (busy.has(server)) continue;
      chart.plot.destroy();
      chart.figure.remove();
      charts.delete(server);
    }
    for (const s of status.servers) {
      if (!busy.has(s.name)) continue;
      let chart = charts.get(s.name);
      if (chart === undefined) {
        chart = newChart(s.name);
        charts.set(s.name, chart);
      }
      chart.plot.setData(chartData(s.activity));
    }
    if (charts.size === 0) byId('charts').replaceChildren(node('p', 'No requests in the last ' + (status.servers[0] ? status.servers[0].activity.windowMinutes : 15) + ' minutes.', 'note'));
    else for (const stray of byId('charts').querySelectorAll(':scope > p')) stray.remove();
  }

  function drawSessions(status) {
    fill('sessions', status.sessions.map((s) => row([cell(s.endpoint), num(s.legacy)], 'endpoint', s.endpoint)), 'none');
  }

  function drawCustomizations(status) {
    fill('customizations', status.customizations.map((c) => {
      const action = document.createElement('td');
      if (c.globallyEnabled !== undefined) {
        const button = node('button', c.globallyEnabled ? 'Disable' : 'Enable', 'toggle');
        button.type = 'button';
        button.dataset.id = c.id;
        button.dataset.enabled = String(c.globallyEnabled);
        action.append(button);
      } else action.textContent = '—';
      const global = c.globallyEnabled === undefined ? undefined : c.globallyEnabled ? 'enabled' : 'disabled';
      return row([cell(c.name), cell(c.type), cell(c.state), cell(global), action], 'customization', c.name);
    }), 'none');
  }

  const field = (entry, name) => (entry[name] === null || entry[name] === undefined ? undefined : String(entry[name]));
  function outcomeOf(entry) {
    if (entry.outcome !== 'error') return field(entry, 'outcome');
    const detail = field(entry, 'reason') ?? field(entry, 'errorCode') ?? field(entry, 'status');
    return detail === undefined ? 'error' : 'error ' + detail;
  }
  let audit = data.status.audit === undefined ? undefined : data.status.audit.slice(0, MAX_AUDIT_ROWS);
  let auditLatest = data.status.auditLatest ?? 0;
  function drawAudit() {
    if (audit === undefined) return fill('audit', [], 'the audit log is off (set "audit" in the config to record and show calls)');
    fill('audit', audit.map((e) => {
      const tr = row([cell(field(e, 'time')), cell(field(e, 'principal')), cell(field(e, 'endpoint')), cell(field(e, 'method')), cell(field(e, 'server')),
        cell(field(e, 'tool') ?? field(e, 'prompt') ?? field(e, 'uri')), cell(field(e, 'decision')), cell(outcomeOf(e))], 'decision', String(e.decision));
      tr.className = 'audit';
      return tr;
    }), 'no audited request yet');
  }

  function draw(status) {
    byId('last-reload').textContent = 'Last reload: ' + lastReload(status.lastReload);
    drawServers(status);
    drawShown(status);
    drawTraffic(status);
    drawSessions(status);
    drawCustomizations(status);
    if (status.audit !== undefined) {
      // Newer lines first, the page's bounded buffer after them.
      audit = status.audit.concat(audit ?? []).slice(0, MAX_AUDIT_ROWS);
      auditLatest = status.auditLatest;
    }
    drawAudit();
  }

  let inflight = false;
  let again = false;
  let stopped = false;
  let timer;
  const schedule = () => {
    clearTimeout(timer);
    if (!stopped && !document.hidden) timer = setTimeout(refresh, REFRESH_MS);
  };
  async function refresh() {
    if (inflight) {
      again = true;
      return;
    }
    inflight = true;
    clearTimeout(timer);
    try {
      const answer = await fetch(urls.status + '?auditAfter=' + auditLatest, { cache: 'no-store', headers: { accept: 'application/json' } });
      const body = await answer.json();
      if (!answer.ok) {
        setLive('refused', 'not refreshed: ' + ((body.error && body.error.message) || answer.status));
        // Refused outright (signed out, no longer an admin): asking again changes nothing.
        stopped = answer.status === 401 || answer.status === 403;
        return;
      }
      draw(body);
      setLive('live', 'live · updated ' + new Date(body.at).toLocaleTimeString());
      ensureWatch();
    } catch (error) {
      setLive('offline', 'gateway unreachable; retrying');
    } finally {
      inflight = false;
      if (again) {
        again = false;
        refresh();
      } else schedule();
    }
  }
  let soon;
  const refreshSoon = () => {
    if (soon !== undefined) return;
    soon = setTimeout(() => {
      soon = undefined;
      refresh();
    }, 50);
  };

  // A state or enablement change arrives here at once (the whole list each time: it is only the cue).
  let watch;
  let watchOpened = 0;
  function ensureWatch() {
    if (document.hidden || stopped || (watch !== undefined && watch.readyState !== EventSource.CLOSED)) return;
    // Refused (e.g. the gateway's watcher limit): the periodic refresh carries on; try again later.
    if (watch !== undefined && Date.now() - watchOpened < 30000) return;
    watchOpened = Date.now();
    watch = new EventSource(urls.watch);
    watch.addEventListener('customizationsChanged', refreshSoon);
  }
  function closeWatch() {
    if (watch !== undefined) watch.close();
    watch = undefined;
  }
  document.addEventListener('visibilitychange', () => {
    if (document.hidden) {
      clearTimeout(timer);
      closeWatch();
      setLive('paused', 'paused while hidden');
    } else refresh();
  });

  const postJson = async (url, body) => {
    const answer = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { ok: answer.ok, body: await answer.json() };
  };
  byId('reload').addEventListener('click', async () => {
    const out = byId('reload-outcome');
    out.textContent = 'reloading…';
    delete out.dataset.outcome;
    try {
      const { body } = await postJson(urls.reload, {});
      out.textContent = body.applied
        ? 'reloaded (' + (body.added.length > 0 ? 'added: ' + body.added.join(', ') + '; ' : '') + 'restarted: ' + (body.restarted.join(', ') || 'none') + '; re-filtered: ' + (body.refiltered.join(', ') || 'none') + ')'
        : 'refused: ' + (body.problems || [body.error && body.error.message]).join('; ');
      out.dataset.outcome = body.applied ? 'applied' : 'refused';
    } catch (error) {
      out.textContent = 'reload failed: ' + error;
      out.dataset.outcome = 'failed';
    }
    refresh();
  });
  byId('customizations').addEventListener('click', async (event) => {
    const button = event.target.closest('button.toggle');
    if (button === null) return;
    const out = byId('toggle-outcome');
    const enabled = button.dataset.enabled !== 'true';
    out.textContent = 'saving…';
    delete out.dataset.outcome;
    try {
      const { ok, body } = await postJson(urls.toggle, { id: button.dataset.id, enabled, scope: 'global' });
      if (!ok) throw new Error((body.error && body.error.message) || 'refused');
      out.textContent = (enabled ? 'enabled' : 'disabled') + ' globally';
      out.dataset.outcome = 'applied';
    } catch (error) {
      out.textContent = 'toggle refused: ' + error.message;
      out.dataset.outcome = 'refused';
    }
    refresh();
  });

  draw(Object.assign({}, data.status, { audit: undefined }));
  setLive('live', 'live · updated ' + new Date(data.status.at).toLocaleTimeString());
  ensureWatch();
  schedule();
})();
`;

/**
 * The admin page's "Held tool changes" section (docs/security.md, "Tool integrity"): reads
 * `GET <path>/integrity`, shows each pending definition with its flags and a line diff of the
 * pinned definition against the new one (pretty-printed JSON, longest common subsequence of lines,
 * at most 400 lines a side), and Approve / Reject buttons that POST the entry's id and the hash
 * shown. Writes nothing but `textContent`: a definition is the upstream's text, never markup.
 */
export const INTEGRITY_SCRIPT = `(() => {
const { urls } = JSON.parse(document.getElementById('admin-data').textContent);
const root = document.getElementById('integrity');
if (!root || !urls.integrity) return;
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; };
const lines = (v) => v === null ? [] : JSON.stringify(v, null, 2).split('\\n').slice(0, 400);
function diff(a, b) {
  const n = a.length, m = b.length, t = Array.from({ length: n + 1 }, () => new Array(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) t[i][j] = a[i] === b[j] ? t[i + 1][j + 1] + 1 : Math.max(t[i + 1][j], t[i][j + 1]);
  const out = []; let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { out.push([' ', a[i]]); i++; j++; }
    else if (i < n && (j >= m || t[i + 1][j] >= t[i][j + 1])) { out.push(['-', a[i]]); i++; }
    else { out.push(['+', b[j]]); j++; }
  }
  return out;
}
async function decide(kind, entry, note) {
  note.textContent = ' …';
  const r = await fetch(urls.integrity + '/' + kind, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: entry.id, hash: entry.hash }) });
  note.textContent = r.ok ? ' done' : ' refused (' + r.status + ')';
  await draw();
}
async function draw() {
  const r = await fetch(urls.integrity, { cache: 'no-store' });
  root.replaceChildren();
  if (!r.ok) { root.append(el('p', 'Not available to this caller (' + r.status + ').', 'note')); return; }
  const data = await r.json();
  root.append(el('p', 'Mode: ' + data.mode + ' · ' + data.pending.length + ' pending' + (data.heldServers.length ? ' · held whole: ' + data.heldServers.map((s) => s.server).join(', ') : ''), 'note'));
  for (const entry of data.pending) {
    const box = el('div', undefined, 'held');
    box.append(el('h3', entry.server + ' · ' + (entry.tool === null ? 'instructions' : entry.tool) + ' · ' + entry.change));
    if (entry.flags.length) { const ul = el('ul', undefined, 'flags'); for (const f of entry.flags) ul.append(el('li', f.kind + ' at ' + f.where + ': ' + f.detail)); box.append(ul); }
    const table = el('table', undefined, 'diff');
    for (const [mark, text] of diff(lines(entry.before), lines(entry.after))) { const tr = el('tr', undefined, mark === '+' ? 'add' : mark === '-' ? 'del' : ''); tr.append(el('td', mark), el('td', text)); table.append(tr); }
    box.append(table, el('p', entry.hash, 'note'));
    const note = el('span');
    const approve = el('button', 'Approve'); approve.type = 'button'; approve.addEventListener('click', () => decide('approve', entry, note));
    const reject = el('button', 'Reject'); reject.type = 'button'; reject.addEventListener('click', () => decide('reject', entry, note));
    const p = el('p'); p.append(approve, ' ', reject, note); box.append(p);
    root.append(box);
  }
}
draw().catch(() => { root.textContent = 'could not load held tool changes'; });
})();`;

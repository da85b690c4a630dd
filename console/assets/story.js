// custody review console: a record's story (lineage picture, receipts,
// history, repair) and the log's status. Uses window.custody from
// console.js.
'use strict';

(() => {
  const SVG = 'http://www.w3.org/2000/svg';
  const $ = (id) => document.getElementById(id);
  const c = () => window.custody;

  function svg(tag, attrs, ...kids) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v != null) e.setAttribute(k, v);
    for (const k of kids) if (k != null) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    return e;
  }

  const short = (id) => (id.length > 10 ? '…' + id.slice(-8) : id);

  // picture draws the lineage: ancestors to the left, by depth, the record
  // in the middle, descendants to the right; each edge carries its weight.
  function picture(l) {
    const r = l.record;
    const nodes = [{ id: r.id, col: 0, state: r.state, authority: r.authority, label: r.namespace + (r.key ? '/' + r.key : ''), root: true }];
    const seen = new Set([r.id]);
    const edges = [];
    for (const [list, sign] of [[l.ancestors, -1], [l.descendants, 1]]) {
      for (const n of list) {
        edges.push({ from: n.id, to: n.via, weight: n.weight });
        if (seen.has(n.id)) continue;
        seen.add(n.id);
        nodes.push({ id: n.id, col: sign * n.depth, state: n.state, authority: n.authority, label: n.namespace ? n.namespace + (n.key ? '/' + n.key : '') : '' });
      }
    }
    const W = 190, H = 64, GX = 70, GY = 20;
    const cols = new Map();
    for (const n of nodes) { if (!cols.has(n.col)) cols.set(n.col, []); cols.get(n.col).push(n); }
    const minCol = Math.min(...cols.keys()), maxCol = Math.max(...cols.keys());
    const rows = Math.max(...[...cols.values()].map((v) => v.length));
    const height = rows * (H + GY) + GY, width = (maxCol - minCol + 1) * (W + GX) + GX;
    const pos = new Map();
    for (const [col, list] of cols) {
      const top = (height - list.length * (H + GY) + GY) / 2;
      list.forEach((n, i) => pos.set(n.id, { x: GX / 2 + (col - minCol) * (W + GX), y: top + i * (H + GY), n }));
    }
    const root = svg('svg', { class: 'lineage', viewBox: '0 0 ' + width + ' ' + height, role: 'img', 'aria-labelledby': 'lineage-title' },
      svg('title', { id: 'lineage-title' }, 'Lineage of ' + r.id + ': ' + l.ancestors.length + ' ancestors, ' + l.descendants.length + ' descendants'));
    for (const e of edges) {
      const a = pos.get(e.from), b = pos.get(e.to);
      if (!a || !b) continue;
      const [left, right] = a.x < b.x ? [a, b] : [b, a];
      const x1 = left.x + W, y1 = left.y + H / 2, x2 = right.x, y2 = right.y + H / 2;
      root.append(svg('path', { class: 'edge', d: 'M' + x1 + ',' + y1 + ' C' + (x1 + GX / 2) + ',' + y1 + ' ' + (x2 - GX / 2) + ',' + y2 + ' ' + x2 + ',' + y2 }),
        svg('text', { x: (x1 + x2) / 2 - 12, y: (y1 + y2) / 2 - 4 }, 'w ' + e.weight));
    }
    for (const { x, y, n } of pos.values()) {
      const g = svg('a', { href: '#record/' + n.id, class: 'node st-' + n.state + (n.root ? ' root' : ''), 'data-id': n.id, 'data-state': n.state },
        svg('title', {}, n.id + ': ' + n.state + (n.authority ? ', authority ' + n.authority : '')),
        svg('rect', { x, y, width: W, height: H, rx: 6 }),
        svg('text', { x: x + 8, y: y + 17 }, short(n.id) + (n.root ? ' (this record)' : '')),
        svg('text', { x: x + 8, y: y + 34, class: 'state' }, n.state + (n.authority ? ' · ' + n.authority : '')),
        svg('text', { x: x + 8, y: y + 51 }, n.label || ''));
      root.append(g);
    }
    return root;
  }

  function facts(pairs) {
    const { el } = c();
    const t = el('table', {});
    for (const [k, v] of pairs) if (v != null && v !== '') t.append(el('tr', {}, el('th', { scope: 'row', text: k }), el('td', { text: v })));
    return t;
  }

  function receiptFacts(rc) {
    if (!rc) return c().el('p', { text: 'No receipt.' });
    return facts([['Decision', rc.decision], ['Rules', (rc.rules || []).join(', ')], ['Reason', rc.reason], ['Actor', rc.actor],
      ['Time', rc.time], ['Log index', rc.log_index], ['Policy version', rc.policy_version],
      ['Inputs', rc.inputs ? Object.entries(rc.inputs).map(([k, v]) => k + '=' + v).join(', ') : '']]);
  }

  async function act(id, path, body, out) {
    const { api, errText, status } = c();
    try {
      const res = await api('POST', '/v1/' + path.replace('{id}', encodeURIComponent(id)), body);
      let msg = 'Done: ' + path.split('/').pop().replace('{id}', '') + '.';
      if (res.state === 'pending_confirmation') msg += ' A sensitive key: the owner must still confirm it.';
      if (res.affected) msg += ' Affected: ' + res.affected.length + '.';
      status(msg, 'ok');
      await story(id);
    } catch (e) {
      out.textContent = errText(e);
      out.className = 'result error';
      status(errText(e), 'error');
    }
  }

  function actions(r) {
    const { el } = c();
    const out = el('p', { class: 'result', role: 'alert' });
    const reason = el('input', { id: 'story-reason', name: 'reason' });
    const btn = (text, cls, path, body) => {
      const b = el('button', { type: 'button', class: cls, text });
      b.addEventListener('click', () => act(r.id, path, body(), out));
      return b;
    };
    const box = el('div', { class: 'actions' }, el('h3', { text: 'Decide and repair' }),
      el('label', { for: 'story-reason', text: 'Reason (kept in the receipt and the log)' }), reason, el('div', {}));
    const row = box.lastChild;
    if (r.state === 'quarantined') {
      row.append(btn('Approve', 'approve', 'review/{id}/approve', () => ({})),
        btn('Reject', 'reject', 'review/{id}/reject', () => ({ reason: reason.value })));
    }
    row.append(btn('Quarantine', 'danger', 'memories/{id}/quarantine', () => ({ reason: reason.value })),
      btn('Retire', 'danger', 'memories/{id}/retire', () => ({ reason: reason.value })),
      btn('Rebuild', '', 'memories/{id}/rebuild', () => ({})));
    box.append(out);
    return box;
  }

  async function story(id) {
    const { api, el, errText } = c();
    const out = $('story');
    $('record-id').value = id || '';
    if (!id) { out.replaceChildren(el('p', { text: 'Give a record id, or open one from the queue (o, or its Items list).' })); return; }
    let l;
    try {
      l = await api('GET', '/v1/memories/' + encodeURIComponent(id) + '/lineage');
    } catch (e) {
      out.replaceChildren(el('p', { class: 'error', text: 'The record could not be read: ' + errText(e) }));
      return;
    }
    const r = l.record;
    document.title = 'Record ' + short(r.id) + ' (' + r.state + ') — custody';
    const nodes = l.ancestors.map((n) => ['ancestor', n]).concat(l.descendants.map((n) => ['descendant', n]));
    const table = el('table', { class: 'nodes' }, el('tr', {}, ...['Relation', 'Record', 'Depth', 'Weight', 'State', 'Authority', 'Via'].map((h) => el('th', { scope: 'col', text: h }))));
    for (const [rel, n] of nodes) {
      table.append(el('tr', { 'data-state': n.state }, el('td', { text: rel }), el('td', {}, el('a', { href: '#record/' + n.id, text: n.id })),
        el('td', { text: n.depth }), el('td', { text: n.weight }), el('td', { text: n.state }), el('td', { text: n.authority || '' }), el('td', { text: n.via })));
    }
    const hist = el('div', { id: 'history' }, el('p', { text: 'Loading history…' }));
    out.replaceChildren(
      el('h3', { text: 'Record ' + r.id }),
      el('p', {}, el('a', { href: '#impact/' + r.id, id: 'story-impact', text: 'What it reached (impact): sessions that read it, gate decisions, descendants' })),
      facts([['State', r.state], ['Authority', r.authority], ['Class', r.class], ['Owner', r.owner], ['Namespace', r.namespace], ['Key', r.key],
        ['Channel', r.channel], ['Writer', r.writer], ['Source', r.source_ref], ['Audience', c().audienceWords(r.audience, r.owner)],
        ['Created', r.created_at], ['Log index', r.log_index], ['Body', r.withheld ? '(withheld)' : r.body]]),
      el('h3', { text: 'Lineage' }), picture(l),
      nodes.length ? table : el('p', { text: 'No ancestors or descendants.' }),
      el('h3', { text: 'Receipt' }), receiptFacts(r.receipt),
      el('h3', { text: 'History' }), hist,
      actions(r));
    try {
      const h = await api('GET', '/v1/memories/' + encodeURIComponent(id) + '/history');
      const t = el('table', {}, el('tr', {}, ...['Version', 'Record', 'State', 'Authority', 'Body', 'Decision', 'Rules', 'Reason'].map((x) => el('th', { scope: 'col', text: x }))));
      for (const v of h.items) {
        const rc = v.receipt || {};
        t.append(el('tr', {}, el('td', { text: v.version }), el('td', {}, el('a', { href: '#record/' + v.id, text: short(v.id) })), el('td', { text: v.state }),
          el('td', { text: v.authority }), el('td', { text: v.withheld ? '(withheld)' : v.body }), el('td', { text: rc.decision || '' }),
          el('td', { text: (rc.rules || []).join(', ') }), el('td', { text: rc.reason || '' })));
      }
      hist.replaceChildren(h.items.length ? t : el('p', { text: 'No versions visible.' }));
    } catch (e) {
      hist.replaceChildren(el('p', { text: 'History not available: ' + errText(e) }));
    }
  }

  // The checkpoint is a C2SP signed note: origin, tree size, root hash,
  // a blank line, then one signature line per signer.
  async function logStatus() {
    const { api, el, errText } = c();
    const out = $('log-body');
    document.title = 'Log status — custody';
    let st;
    try {
      st = await api('GET', '/v1/log/status');
    } catch (e) {
      out.replaceChildren(el('p', { class: 'error', text: 'The log status could not be read: ' + errText(e) }));
      return;
    }
    const text = st.checkpoint;
    const [body, sigs = ''] = text.split('\n\n');
    const [origin, size, root] = body.split('\n');
    const signers = sigs.split('\n').filter((s) => s.startsWith('— ')).map((s) => s.slice(2).split(' ')[0]);
    const v = st.last_verify;
    const verified = !v
      ? 'never recorded: run custody verify on the store'
      : (v.ok ? 'passed' : 'FAILED: ' + v.problem) + ' at ' + v.at + ' (' + v.entries + ' entries)';
    out.replaceChildren(
      facts([['Origin', origin], ['Tree size', size], ['Root hash', root], ['Signed by', signers.join(', ')], ['Last verify', verified]]),
      el('h3', { text: 'Signed checkpoint' }), el('pre', { class: 'checkpoint', text }),
      el('h3', { text: 'Verifier key' }), el('pre', { class: 'vkey', text: st.verifier_key }),
      el('p', { text: 'Compare this key with the one custody serve printed at start (or custody log key --db on the store) before you pin it: custody log checkpoint --pin FILE --verifier KEY holds the server to the checkpoints you saw. The last verify is what custody verify recorded beside the store; run it again to check the store now.' }));
  }

  window.custodyStory = story;
  window.custodyLog = logStatus;

  document.addEventListener('DOMContentLoaded', () => {
    $('record-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      location.hash = '#record/' + $('record-id').value.trim();
    });
  });
})();

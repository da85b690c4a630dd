// custody review console: a record's story (lineage picture, receipt,
// the versions of its key, the decisions the signed-in principal may take
// on it) and the log's status. Uses window.custody from console.js.
'use strict';

(() => {
  const SVG = 'http://www.w3.org/2000/svg';
  const c = window.custody;
  const { el, untrusted, $ } = c;

  function svg(tag, attrs, ...kids) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v != null) e.setAttribute(k, v);
    for (const k of kids) if (k != null) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    return e;
  }

  const short = (id) => (id.length > 10 ? '…' + id.slice(-8) : id);
  const fit = (s, n) => (s.length > n ? s.slice(0, n - 1) + '…' : s);
  const where = (r) => r.namespace + (r.key ? '/' + r.key : '');

  // picture draws the lineage: ancestors to the left, by depth, the record
  // in the middle, descendants to the right; each edge carries its weight.
  // It is drawn at its own size (12px text at any zoom), in a box that
  // scrolls when it is wider than the page; labels are cut to their boxes
  // and given whole in each node's title and in the table below.
  function picture(l) {
    const r = l.record;
    const nodes = [{ id: r.id, col: 0, state: r.state, authority: r.authority, label: where(r), root: true }];
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
    const W = 220, H = 64, GX = 70, GY = 20, CH = 28; // CH: characters that fit a box at 12px
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
    const root = svg('svg', { class: 'lineage', width, height, viewBox: '0 0 ' + width + ' ' + height, role: 'group', 'aria-label': 'Lineage of ' + r.id + ': ' + l.ancestors.length + ' ancestors, ' + l.descendants.length + ' descendants; each node links to its story' });
    for (const e of edges) {
      const a = pos.get(e.from), b = pos.get(e.to);
      if (!a || !b) continue;
      const [left, right] = a.x < b.x ? [a, b] : [b, a];
      const x1 = left.x + W, y1 = left.y + H / 2, x2 = right.x, y2 = right.y + H / 2;
      root.append(svg('path', { class: 'edge', d: 'M' + x1 + ',' + y1 + ' C' + (x1 + GX / 2) + ',' + y1 + ' ' + (x2 - GX / 2) + ',' + y2 + ' ' + x2 + ',' + y2 }),
        svg('text', { x: (x1 + x2) / 2 - 12, y: (y1 + y2) / 2 - 4, 'aria-hidden': 'true' }, 'w ' + e.weight));
    }
    for (const { x, y, n } of pos.values()) {
      const st = n.state + (n.authority ? ' · ' + n.authority : '');
      const g = svg('a', { href: '#record/' + n.id, class: 'node st-' + n.state + (n.root ? ' root' : ''), 'data-id': n.id, 'data-state': n.state },
      svg('title', {}, n.id + ': ' + st + (n.label ? ' — ' + n.label : '')),
      svg('rect', { x, y, width: W, height: H, rx: 6 }),
      svg('text', { x: x + 8, y: y + 17 }, short(n.id) + (n.root ? ' (this record)' : '')),
      svg('text', { x: x + 8, y: y + 34, class: 'state' }, fit(st, CH)),
      svg('text', { x: x + 8, y: y + 51 }, fit(n.label || '', CH)));
      root.append(g);
    }
    return el('div', { class: 'picture' }, root);
  }

  function facts(pairs) {
    const t = el('table', { class: 'facts-table' });
    for (const [k, v] of pairs) {
      if (v == null || v === '') continue;
      t.append(el('tr', {}, el('th', { scope: 'row', text: k }), v instanceof Node ? el('td', {}, v) : el('td', { text: String(v) })));
    }
    return c.wrap(t, 'facts');
  }

  function receiptFacts(rc) {
    if (!rc) return el('p', { text: 'No receipt.' });
    return facts([['Decision', rc.decision], ['Rules', (rc.rules || []).join(', ')], ['Reason', untrusted(rc.reason)], ['Actor', rc.actor],
      ['Time', c.when(rc.time)], ['Log index', rc.log_index], ['Policy version', rc.policy_version],
      ['Inputs', rc.inputs ? Object.entries(rc.inputs).map(([k, v]) => k + '=' + v).join(', ') : '']]);
  }

  // ---- actions: only those the signed-in principal may take here ----

  const ACTS = {
    approve: { label: 'Approve…', cls: 'approve', path: 'review/{id}/approve', reason: false, ok: 'Approve', words: 'Admits it with authority confirmed.' },
    reject: { label: 'Reject…', cls: 'reject', path: 'review/{id}/reject', reason: true, ok: 'Reject', words: 'It is never admitted.' },
    quarantine: { label: 'Quarantine…', cls: 'danger', path: 'memories/{id}/quarantine', reason: true, ok: 'Quarantine', words: 'It leaves retrieval at once, and every record derived from it is suspended.' },
    retire: { label: 'Retire…', cls: 'danger', path: 'memories/{id}/retire', reason: true, ok: 'Retire for good', words: 'Permanent: it never becomes eligible again (not even from a snapshot), and every record derived from it is suspended.' },
    rebuild: { label: 'Rebuild…', cls: '', path: 'memories/{id}/rebuild', reason: false, ok: 'Rebuild', words: 'Decides it again from its surviving approved parents.' },
  };

  function allowed(r) {
    const rev = c.has('reviewer', 'admin');
    const out = [];
    if (r.state === 'quarantined') {
      if (r.class === 'procedure' ? c.has('policy_owner', 'admin') : rev) out.push('approve');
      if (rev) out.push('reject');
    }
    if (r.state === 'pending' && rev) out.push('reject');
    if (rev && ['admitted', 'suspended', 'pending_confirmation'].includes(r.state)) out.push('quarantine');
    if (rev && !['retired', 'rejected'].includes(r.state)) out.push('retire');
    if (rev && r.state === 'suspended') out.push('rebuild');
    return out;
  }

  function actions(r, l) {
    const acts = allowed(r);
    const box = el('div', { class: 'actions' }, el('h3', { text: 'Decide and repair' }));
    const out = el('p', { class: 'result', role: 'alert' });
    if (r.state === 'pending_confirmation' && c.has('user') && r.owner === c.me.name) {
      box.append(el('p', {}, 'This change waits for your confirmation: ', el('a', { href: '#mine', text: 'confirm or decline it on your page' }), '.'));
    }
    if (r.class === 'procedure' && r.state === 'quarantined' && !acts.includes('approve') && c.reviews()) {
      box.append(el('p', { class: 'needs', text: 'No Approve button: approving a procedure needs the policy_owner or admin role; you are ' + c.me.roles.join(', ') + '.' }));
    }
    const sus = l.descendants.filter((d) => d.state === 'suspended');
    if (sus.length && r.state === 'admitted' && c.has('reviewer', 'admin')) {
      box.append(el('p', { class: 'hint' }, sus.length + (sus.length === 1 ? ' record derived from it is' : ' records derived from it are') + ' suspended; open each to rebuild it: ',
        ...sus.slice(0, 10).flatMap((d, i) => [i ? ', ' : '', el('a', { href: '#record/' + d.id, text: short(d.id) })])));
    }
    if (!acts.length) {
      box.append(el('p', { text: 'Nothing you may do to a record in state ' + r.state + (c.reviews() ? '.' : ': deciding and repairing need a reviewer or admin.') }));
      return box;
    }
    const row = el('div', { class: 'row-actions' });
    for (const a of acts) {
      const b = el('button', { type: 'button', class: ACTS[a].cls, 'data-act': a, text: ACTS[a].label });
      b.addEventListener('click', () => confirmForm(box, r, a, out));
      row.append(b);
    }
    box.append(row, out);
    return box;
  }

  // confirmForm asks for the reason (required for what takes something
  // away) and a second, explicit button before anything is sent.
  function confirmForm(box, r, a, out) {
    const A = ACTS[a];
    const old = box.querySelector('form');
    if (old) old.remove();
    const form = el('form', { class: 'decide', 'data-act': a },
      el('p', { class: 'effect', text: A.ok + ' ' + where(r) + ' (' + r.id + ')? ' + A.words }),
      el('label', { for: 'story-reason', text: A.reason ? 'Reason (required, kept in the receipt and the log)' : 'Reason (optional, kept in the receipt and the log)' }),
      el('input', { id: 'story-reason', name: 'reason', required: A.reason }),
      el('button', { type: 'submit', class: A.cls, text: A.ok }),
      el('button', { type: 'button', 'data-act': 'cancel', text: 'Cancel' }));
    const cancel = () => { form.remove(); box.querySelector('button[data-act="' + a + '"]').focus(); };
    form.querySelector('[data-act=cancel]').addEventListener('click', cancel);
    form.addEventListener('keydown', (ev) => { if (ev.key === 'Escape') { ev.preventDefault(); cancel(); } });
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const reason = form.reason.value.trim();
      try {
        const res = await c.api('POST', '/v1/' + A.path.replace('{id}', encodeURIComponent(r.id)), reason ? { reason } : {});
        let msg = 'Done: ' + a + '.';
        if (res.state === 'pending_confirmation') msg += ' A sensitive key: the owner must still confirm it.';
        if (res.affected) msg += ' Affected: ' + res.affected.length + '.';
        c.status(msg, 'ok');
        await story(r.id);
      } catch (e) {
        out.textContent = c.errText(e);
        out.className = 'result error';
        c.status(c.errText(e), 'error');
      }
    });
    box.querySelector('.row-actions').after(form);
    form.querySelector('input').focus();
  }

  async function versions(r) {
    const reviewer = c.reviews();
    const path = reviewer ? '/v1/review/' + encodeURIComponent(r.id) + '/versions' : '/v1/memories/' + encodeURIComponent(r.id) + '/history';
    const h = await c.api('GET', path);
    const t = el('table', { class: 'versions' }, el('thead', {}, el('tr', {}, ...['Version', 'Record', 'In force', 'State', 'Authority', 'Body', 'Decision', 'Reason'].map((x) => el('th', { scope: 'col', text: x })))));
    const tb = el('tbody');
    for (const v of h.items) {
      const rc = v.receipt || {};
      tb.append(el('tr', { class: v.in_force ? 'in-force' : null, 'data-id': v.id }, el('td', { text: v.version }), el('td', {}, el('a', { href: '#record/' + v.id, text: short(v.id) }), v.id === r.id ? ' (this)' : ''),
        el('td', { text: reviewer ? (v.in_force ? 'in force' : '') : '' }), el('td', { text: v.state }),
        el('td', { text: v.authority }), el('td', {}, v.withheld ? el('span', { class: 'empty', text: '(withheld: not readable by you now)' }) : untrusted(v.body, { collapse: 200 })),
        el('td', { text: rc.decision || '' }), el('td', {}, untrusted(rc.reason || ''))));
    }
    t.append(tb);
    return h.items.length ? c.wrap(t, 'versions') : el('p', { text: 'No versions visible.' });
  }

  async function story(id) {
    const out = $('story');
    $('record-id').value = id || '';
    if (!id) { out.replaceChildren(el('p', { text: 'Give a record id, or open one from the queue (o, or an item\'s Story link).' })); return; }
    let l;
    try {
      l = await c.api('GET', '/v1/memories/' + encodeURIComponent(id) + '/lineage');
    } catch (e) {
      out.replaceChildren(el('p', { class: 'error', text: 'The record could not be read: ' + c.errText(e) }));
      return;
    }
    const r = l.record;
    document.title = 'Record ' + short(r.id) + ' (' + r.state + ') — custody';
    const nodes = l.ancestors.map((n) => ['ancestor', n]).concat(l.descendants.map((n) => ['descendant', n]));
    const table = el('table', { class: 'nodes' }, el('thead', {}, el('tr', {}, ...['Relation', 'Record', 'Where', 'Depth', 'Weight', 'State', 'Authority', 'Via'].map((h) => el('th', { scope: 'col', text: h })))));
    const tb = el('tbody');
    for (const [rel, n] of nodes) {
      tb.append(el('tr', { 'data-state': n.state }, el('td', { text: rel }), el('td', {}, el('a', { href: '#record/' + n.id, text: n.id })),
        el('td', {}, n.namespace ? untrusted(n.namespace + (n.key ? '/' + n.key : '')) : ''),
        el('td', { text: n.depth }), el('td', { text: n.weight }), el('td', { text: n.state }), el('td', { text: n.authority || '' }), el('td', { text: n.via })));
    }
    table.append(tb);
    const hist = el('div', { id: 'history' }, el('p', { text: 'Loading the versions…' }));
    out.replaceChildren(
      el('h3', { text: 'Record ' + r.id }),
      c.has('reviewer', 'admin') ? el('p', {}, el('a', { href: '#impact/' + r.id, id: 'story-impact', text: 'What it reached (impact): sessions that read it, gate decisions, descendants' })) : null,
      facts([['State', r.state], ['Authority', r.authority], ['Class', r.class], ['Owner', r.owner], ['Namespace', untrusted(r.namespace)], ['Key', r.key ? untrusted(r.key) : ''],
        ['Channel', r.channel], ['Writer', r.writer], ['Source', r.source_ref ? untrusted(r.source_ref) : ''], ['Audience', c.audienceWords(r.audience, r.owner)],
        ['Derived from', r.parents && r.parents.length ? r.parents.length + ' record(s), listed below' : ''],
        ['Created', c.when(r.created_at)], ['Log index', r.log_index],
        ['Body', r.withheld ? el('span', { class: 'empty', text: '(withheld: not readable by you in this state; see the versions below)' }) : untrusted(r.body, { block: true, collapse: 600 })]]),
      el('h3', { text: 'Lineage' }), picture(l),
      nodes.length ? c.wrap(table, 'lineage table') : el('p', { text: 'No ancestors or descendants.' }),
      el('h3', { text: 'Receipt' }), receiptFacts(r.receipt),
      el('h3', { text: r.key ? 'Versions of its key' : 'Versions' }), hist,
      actions(r, l));
    try {
      hist.replaceChildren(await versions(r));
    } catch (e) {
      hist.replaceChildren(el('p', { text: 'The versions could not be read: ' + c.errText(e) }));
    }
  }

  // The checkpoint is a C2SP signed note: origin, tree size, root hash,
  // a blank line, then one signature line per signer.
  async function logStatus() {
    const out = $('log-body');
    document.title = 'Log status — custody';
    let st;
    try {
      st = await c.api('GET', '/v1/log/status');
    } catch (e) {
      out.replaceChildren(el('p', { class: 'error', text: 'The log status could not be read: ' + c.errText(e) }));
      return;
    }
    const text = st.checkpoint;
    const [body, sigs = ''] = text.split('\n\n');
    const [origin, size, root] = body.split('\n');
    const signers = sigs.split('\n').filter((s) => s.startsWith('— ')).map((s) => s.slice(2).split(' ')[0]);
    const v = st.last_verify;
    const n = st.size != null ? st.size : Number(size);
    let verified = el('span', { text: 'never recorded: run custody verify on the store' });
    if (v) {
      const behind = n - v.entries;
      verified = el('span', { class: v.ok && behind <= 0 ? null : 'warn-text' },
        (v.ok ? 'passed' : 'FAILED: ' + v.problem) + ' ', c.when(v.at), ', covering ' + v.entries + ' of the ' + n + ' entries now in the log' +
        (behind > 0 ? ': the last ' + behind + ' were never verified; run custody verify again' : ''));
    }
    out.replaceChildren(
      facts([['Origin', origin], ['Tree size', size], ['Root hash', root], ['Signed by', signers.join(', ')], ['Last verify', verified]]),
      el('h3', { text: 'Signed checkpoint' }), el('pre', { class: 'checkpoint', text }),
      el('h3', { text: 'Verifier key' }), el('pre', { class: 'vkey', text: st.verifier_key }),
      el('p', { text: 'Compare this key with the one custody serve printed at start (or custody log key --db on the store) before you pin it: custody log checkpoint --pin FILE --verifier KEY holds the server to the checkpoints you saw. The last verify is what custody verify recorded beside the store; run it again to check the store now.' }));
  }

  c.handlers.record = story;
  c.handlers.log = logStatus;

  document.addEventListener('DOMContentLoaded', () => {
    $('record-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      location.hash = '#record/' + $('record-id').value.trim();
    });
  });
})();

// custody review console: the review queue. Items that share a source or a
// body are one row; each item shows its own effect (the value in force
// beside the proposal, a procedure's text, its audience, its lineage) and
// can be selected on its own; a decision lists every selected item with
// its effect, grouped by effect, before it is sent. Uses window.custody
// from console.js.
'use strict';

(() => {
  const c = window.custody;
  const { el, untrusted, $ } = c;
  const PAGE = 500; // the API's largest page
  const MAX_ITEMS = 20000;
  const POLL_MS = 5000; // at least; longer when a load takes long
  const state = { items: [], groups: [], shown: [], sel: 0, picked: new Set(), known: null, timer: 0, loadMs: 0, mine: new Set() };

  // ---- what an item does ----

  const where = (it) => it.namespace + (it.key ? '/' + it.key : '');
  const overwrite = (it) => !!(it.proposed && it.proposed.old != null);
  const mayApprove = (it) => (it.approval_needs ? c.has(...it.approval_needs.roles) : c.has('reviewer', 'admin'));
  const mayReject = () => c.has('reviewer', 'admin');

  // effect is what admitting it would do, in words: a sentence of its own
  // for each kind, used to group a decision's items.
  function effect(it) {
    const who = c.audienceWords(it.audience, it.owner);
    if (it.class === 'procedure') return 'Admits a procedure (it changes how agents behave) for ' + who;
    if (overwrite(it)) {
      return 'Replaces ' + where(it) + ' for ' + who + (it.sensitive ? '; a sensitive key: it then waits for ' + it.owner + '\'s confirmation, the old value stays in force meanwhile' : '');
    }
    if (it.proposed) return 'Sets ' + where(it) + ' (no value yet) for ' + who;
    return 'Adds a ' + it.class + ' to ' + it.namespace + ' for ' + who;
  }

  function risk(it) {
    let r = 0;
    if (it.class === 'procedure') r += 8;
    if (it.sensitive) r += overwrite(it) ? 4 : 2;
    if (it.audience === 'tenant') r += 3; else if (it.audience && it.audience.startsWith('group:')) r += 2;
    if (it.parents && it.parents.length) r += 1;
    if (c.hasHidden(it.body) || c.hasHidden(it.source_ref)) r += 1;
    return r;
  }

  const kinds = {
    procedure: (it) => it.class === 'procedure',
    sensitive: (it) => !!it.sensitive,
    shared: (it) => !!it.audience && it.audience !== 'owner',
    derived: (it) => !!(it.parents && it.parents.length),
  };

  function distinct(items, f, limit) {
    const vs = [...new Set(items.map(f).filter((v) => v !== '' && v != null))];
    if (!vs.length) return '—';
    const n = limit || 4;
    const shown = vs.slice(0, n).join(', ');
    return vs.length > n ? shown + ' (+' + (vs.length - n) + ' more)' : shown;
  }

  // group joins items that share a source_ref or a body (union-find).
  function group(items) {
    const parent = items.map((_, i) => i);
    const find = (i) => { while (parent[i] !== i) { parent[i] = parent[parent[i]]; i = parent[i]; } return i; };
    const seen = new Map();
    items.forEach((it, i) => {
      for (const k of [it.source_ref ? 's:' + it.source_ref : null, 'b:' + it.body]) {
        if (k === null) continue;
        if (!seen.has(k)) { seen.set(k, i); continue; }
        const a = find(i), b = find(seen.get(k));
        if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
      }
    });
    const byRoot = new Map(), out = [];
    items.forEach((it, i) => {
      const r = find(i);
      let g = byRoot.get(r);
      if (!g) { g = { items: [] }; byRoot.set(r, g); out.push(g); }
      g.items.push(it);
    });
    for (const g of out) g.risk = Math.max(...g.items.map(risk));
    return out;
  }

  // ---- loading, live ----

  async function loadQueue(opts) {
    const rows = $('queue-rows');
    const t0 = performance.now();
    let items = [], cursor = '';
    try {
      do {
        const page = await c.api('GET', '/v1/review?limit=' + PAGE + (cursor ? '&cursor=' + encodeURIComponent(cursor) : ''));
        items = items.concat(page.items);
        cursor = page.next_cursor;
      } while (cursor && items.length < MAX_ITEMS);
    } catch (e) {
      rows.replaceChildren(el('p', { class: 'error', text: 'The queue could not be read: ' + c.errText(e) }));
      $('queue-count').textContent = '';
      document.title = 'Review queue — custody';
      return;
    }
    state.loadMs = performance.now() - t0;
    if (opts && opts.live && document.querySelector('#queue .decide')) return; // a form opened meanwhile: draw next time
    const ids = new Set(items.map((it) => it.id));
    let fresh = 0, gone = 0;
    if (state.known) {
      for (const it of items) if (!state.known.has(it.id)) { fresh++; it.fresh = true; }
      for (const id of state.known) if (!ids.has(id) && !state.mine.has(id)) gone++;
    }
    const keepSel = (state.shown[state.sel] || { items: [{}] }).items[0].id;
    // Where the focus is, to put it back after the redraw: the item or row
    // (by an item id) and the control in it.
    const fe = document.activeElement && document.activeElement.closest('#queue-rows') ? document.activeElement : null;
    const focus = fe && {
      id: (fe.closest('[data-id]') || fe.closest('.row').querySelector('[data-id]') || {}).dataset?.id,
      item: !!fe.closest('li.item'), act: fe.dataset.act, cls: fe.classList.contains('pick') ? 'pick' : '' };
    for (const id of [...state.picked]) if (!ids.has(id)) state.picked.delete(id);
    for (const it of items) if (!state.known || !state.known.has(it.id)) state.picked.add(it.id);
    state.known = ids;
    state.mine.clear();
    state.items = items;
    state.truncated = !!cursor;
    state.groups = group(items);
    render();
    const i = state.shown.findIndex((g) => g.items.some((it) => it.id === keepSel));
    state.sel = i >= 0 ? i : Math.min(state.sel, Math.max(0, state.shown.length - 1));
    markSelected();
    if (focus && focus.id) {
      const li = rows.querySelector('li.item[data-id="' + CSS.escape(focus.id) + '"]');
      const scope = li && (focus.item ? li : li.closest('.row'));
      const f = scope && (focus.cls ? scope.querySelector('.pick') : focus.act ? scope.querySelector('[data-act="' + focus.act + '"]') : scope);
      if (f) f.focus({ preventScroll: true });
    }
    const d = new Date().toISOString();
    $('queue-updated').textContent = 'Updated ' + d.slice(11, 19) + ' UTC' + (fresh ? ' · ' + fresh + ' new' : '') + (gone ? ' · ' + gone + ' decided elsewhere or expired' : '');
  }

  function schedule() {
    clearTimeout(state.timer);
    state.timer = setTimeout(async () => {
      const busy = document.querySelector('#queue .decide'); // a decision being written is never redrawn away
      if (!$('queue').hidden && !document.hidden && !busy) await loadQueue({ live: true });
      if (!$('queue').hidden) schedule();
    }, Math.max(POLL_MS, 10 * state.loadMs));
  }

  // ---- drawing ----

  function filtered() {
    const on = Object.keys(kinds).filter((k) => $('filter-' + k).checked);
    let gs = state.groups.filter((g) => !on.length || g.items.some((it) => on.some((k) => kinds[k](it))));
    if ($('order').value === 'risk') gs = gs.slice().sort((a, b) => b.risk - a.risk);
    return gs;
  }

  function render() {
    const t0 = performance.now();
    const rows = $('queue-rows');
    const n = state.items.length;
    state.shown = filtered();
    $('queue-count').textContent = '(' + n + (state.truncated ? '+' : '') + ' held in ' + state.groups.length + ' rows' +
      (state.shown.length !== state.groups.length ? '; ' + state.shown.length + ' shown by the filter' : '') +
      (state.truncated ? '; only the oldest ' + n + ' are read' : '') + ')';
    document.title = '(' + n + ') Review queue — custody';
    const frag = document.createDocumentFragment();
    if (!n) frag.append(el('p', { text: 'Nothing is held for review.' }));
    else if (!state.shown.length) frag.append(el('p', { text: 'No row matches the filter.' }));
    const now = Date.now();
    state.shown.forEach((g, i) => frag.append(renderRow(g, i, now)));
    rows.replaceChildren(frag);
    rows.dataset.renderMs = String(Math.round(performance.now() - t0));
    rows.dataset.items = String(n);
  }

  function badge(text, cls) { return el('span', { class: 'badge ' + (cls || ''), text }); }

  function lineageNote(it) {
    const out = [];
    if (it.parents && it.parents.length) {
      out.push(el('li', {}, 'Derived from ' + it.parents.length + (it.parents.length === 1 ? ' record: ' : ' records: '),
        ...it.parents.flatMap((p, i) => [i ? ', ' : '', el('a', { href: '#record/' + p.id, text: p.id.slice(-8) }), ' (weight ' + p.weight + ')'])));
    }
    const deps = it.dependents || [];
    if (deps.length) {
      const sus = deps.filter((d) => d.state === 'suspended').length;
      out.push(el('li', {}, deps.length + (deps.length === 1 ? ' record depends on it' : ' records depend on it') +
        (sus ? ' (' + sus + ' suspended: after approval, rebuild them from their story)' : '') + ': ',
        ...deps.slice(0, 5).flatMap((d, i) => [i ? ', ' : '', el('a', { href: '#record/' + d.id, text: d.id.slice(-8) }), ' ' + d.state])));
    }
    return out.length ? el('ul', { class: 'lineage-note' }, ...out) : null;
  }

  function proposal(it) {
    if (it.class === 'procedure') {
      return el('div', { class: 'procedure' }, el('p', { class: 'label', text: 'The procedure\'s text, as written (untrusted):' }), untrusted(it.body, { block: true, collapse: 600 }));
    }
    if (it.proposed) {
      return el('dl', { class: 'proposal' },
        el('dt', { text: 'In force now' }), el('dd', { class: 'old' }, it.proposed.old == null ? el('span', { class: 'empty', text: '(no value)' }) : untrusted(it.proposed.old, { collapse: 300 })),
        el('dt', { text: 'Proposed' }), el('dd', { class: 'new' }, untrusted(it.proposed.new, { collapse: 300 })));
    }
    return el('div', { class: 'body' }, el('span', { class: 'label', text: 'Body: ' }), untrusted(it.body, { collapse: 300 }));
  }

  function renderItem(it) {
    const cb = el('input', { type: 'checkbox', class: 'pick', id: 'pick-' + it.id, 'data-id': it.id });
    cb.checked = state.picked.has(it.id);
    const needs = it.approval_needs;
    const li = el('li', { class: 'item' + (it.fresh ? ' fresh' : ''), 'data-id': it.id },
      el('div', { class: 'item-head' }, cb,
        el('label', { for: 'pick-' + it.id, class: 'inline' }, 'Select ', el('span', { class: 'mono', text: it.id.slice(-8) })),
        it.fresh ? badge('new', 'new') : null,
        it.class === 'procedure' ? badge('procedure', 'warn') : null,
        it.sensitive ? badge('sensitive key', 'warn') : null,
        it.audience && it.audience !== 'owner' ? badge(it.audience === 'tenant' ? 'tenant-wide' : 'group ' + it.audience.slice(6), 'warn') : null,
        it.parents && it.parents.length ? badge('derived') : null,
        ' ', el('a', { href: '#record/' + it.id, class: 'story-link', text: 'Story' })),
      el('p', { class: 'item-effect', text: effect(it) + '.' }),
      proposal(it),
      el('p', { class: 'item-meta' }, it.channel + ' from ', untrusted(it.source_ref || '(no source)'), ' by ' + it.writer + ', class ' + it.class + ', for ' + it.owner),
      lineageNote(it),
      needs && !mayApprove(it)
        ? el('p', { class: 'needs' }, 'No Approve button: approving it needs the ' + needs.roles.join(' or ') + ' role (' + needs.rules.join(', ') + '); you are ' + c.me.roles.join(', ') + '.')
        : null,
      el('div', { class: 'item-actions' },
        mayApprove(it) ? el('button', { type: 'button', class: 'approve', 'data-act': 'approve', 'data-id': it.id, text: 'Approve this' }) : null,
        mayReject() ? el('button', { type: 'button', class: 'reject', 'data-act': 'reject', 'data-id': it.id, text: 'Reject this' }) : null));
    return li;
  }

  function renderRow(g, i, now) {
    const its = g.items;
    const oldest = Math.min(...its.map((it) => Date.parse(it.created_at)));
    const expires = Math.min(...its.map((it) => Date.parse(it.expires_review_at)));
    const left = expires - now;
    const rules = distinct(its, (it) => (it.receipt ? it.receipt.rules.join(' + ') : ''), 3);
    const reasons = distinct(its, (it) => (it.receipt ? it.receipt.reason : ''), 2);
    const effects = [...new Set(its.map(effect))];
    const anyApprove = its.some(mayApprove);
    return el('div', { class: 'row', role: 'listitem', tabindex: '-1', 'data-g': i, 'aria-label': 'row ' + (i + 1) + ': ' + its.length + ' held' },
      el('h3', {}, el('span', { class: 'count', title: its.length + ' held items', text: its.length }),
        el('span', { class: 'effect', text: effects.length === 1 ? effects[0] : effects.length + ' different effects: see each item' })),
      el('dl', { class: 'facts' },
        el('dt', { text: 'Channel' }), el('dd', { text: distinct(its, (it) => it.channel) }),
        el('dt', { text: 'Writer' }), el('dd', { text: distinct(its, (it) => it.writer) }),
        el('dt', { text: 'Source' }), el('dd', { class: 'source' }, ...[...new Set(its.map((it) => it.source_ref || '(none)'))].slice(0, 4).flatMap((s, k) => [k ? ', ' : '', untrusted(s)])),
        el('dt', { text: 'Owner' }), el('dd', { text: distinct(its, (it) => it.owner) }),
        el('dt', { text: 'Class' }), el('dd', { text: distinct(its, (it) => it.class) }),
        el('dt', { text: 'Would be seen by' }), el('dd', { class: 'audience', text: distinct(its, (it) => c.audienceWords(it.audience, it.owner), 2) + ' (authority confirmed)' }),
        el('dt', { text: 'Age' }), el('dd', { text: c.dur(now - oldest) }),
        el('dt', { text: 'Expires to rejected in' }), el('dd', { class: left < 86400000 ? 'expiring' : null, text: left > 0 ? c.dur(left) : 'now (the next sweep rejects it)' }),
        el('dt', { text: 'Held by' }), el('dd', { class: 'rules' }, rules + ' — ', untrusted(reasons))),
      el('div', { class: 'row-actions' },
        anyApprove ? el('button', { type: 'button', class: 'approve', 'data-act': 'approve', text: 'Approve selected…' }) : null,
        mayReject() ? el('button', { type: 'button', class: 'reject', 'data-act': 'reject', text: 'Reject selected…' }) : null,
        !anyApprove ? el('span', { class: 'needs', text: 'You may approve none of these.' }) : null),
      el('ul', { class: 'members' }, ...its.map(renderItem)));
  }

  function rowEl(i) { return $('queue-rows').querySelector('.row[data-g="' + i + '"]'); }

  function markSelected() {
    for (const r of $('queue-rows').querySelectorAll('.row.selected')) r.classList.remove('selected');
    const r = rowEl(state.sel);
    if (r) r.classList.add('selected');
  }

  function select(i, focus) {
    if (!state.shown.length) return;
    state.sel = Math.max(0, Math.min(state.shown.length - 1, i));
    markSelected();
    const r = rowEl(state.sel);
    if (focus !== false && r) { r.focus({ preventScroll: true }); r.scrollIntoView({ block: 'nearest' }); }
  }

  // ---- deciding ----

  // openDecision shows the summary of approving or rejecting ids of row i:
  // each item with its own effect, grouped by effect, and those the
  // signed-in principal may not approve set aside.
  function openDecision(i, act, ids) {
    select(i, false);
    const r = rowEl(i);
    for (const f of document.querySelectorAll('#queue .decide')) f.remove();
    const its = state.shown[i].items.filter((it) => ids.includes(it.id));
    const ok = act === 'approve' ? its.filter(mayApprove) : its;
    const out = act === 'approve' ? its.filter((it) => !mayApprove(it)) : [];
    const byEffect = new Map();
    for (const it of ok) { const k = effect(it); if (!byEffect.has(k)) byEffect.set(k, []); byEffect.get(k).push(it); }
    const what = ok.length === 1 ? '1 item' : ok.length + ' items';
    const verb = act === 'approve' ? 'Approve' : 'Reject';
    const summary = el('div', { class: 'summary' },
      el('p', { class: 'summary-head', text: verb + ' ' + what + (byEffect.size > 1 ? ', with ' + byEffect.size + ' different effects:' : ':') }),
      ...[...byEffect].map(([k, list]) => el('div', { class: 'effect-group' },
        el('p', { class: 'effect', text: (act === 'approve' ? k : 'Rejected, never admitted: ' + k) + ' — ' + list.length + (list.length === 1 ? ' item' : ' items') }),
        el('ul', {}, ...list.map((it) => el('li', { 'data-id': it.id }, el('span', { class: 'mono', text: it.id.slice(-8) }), ' ' + it.class + ' ',
          it.proposed ? untrusted(where(it)) : null, it.proposed ? ': ' : ' ',
          overwrite(it) ? untrusted(it.proposed.old, { collapse: 80 }) : null, overwrite(it) ? ' → ' : null,
          untrusted(it.proposed ? it.proposed.new : it.body, { collapse: 120 }),
          it.parents && it.parents.length ? ' (derived from ' + it.parents.length + ')' : '',
          it.sensitive ? ' (sensitive key)' : ''))))),
      out.length ? el('p', { class: 'needs', text: 'Not included: ' + out.length + (out.length === 1 ? ' item needs ' : ' items need ') +
        [...new Set(out.flatMap((it) => it.approval_needs.roles))].join(' or ') + ' to approve.' }) : null);
    const form = el('form', { class: 'decide', 'data-act': act }, summary,
      el('label', { for: 'reason-' + i, text: act === 'approve' ? 'Reason (optional, kept in the receipt and the log)' : 'Reason for rejecting (required, kept in the receipt and the log)' }),
      el('input', { id: 'reason-' + i, name: 'reason', required: act === 'reject' }),
      ok.length ? el('button', { type: 'submit', class: act, text: (act === 'approve' ? 'Confirm approval of ' : 'Confirm rejection of ') + what }) : null,
      el('button', { type: 'button', 'data-act': 'cancel', text: 'Cancel' }));
    form.addEventListener('submit', (ev) => { ev.preventDefault(); decide(act, ok.map((it) => it.id), form.reason.value); });
    // The shortcut that opened the form must not also type into it.
    form.addEventListener('beforeinput', (ev) => { if (state.swallow && ev.data === state.swallow) ev.preventDefault(); });
    r.querySelector('.row-actions').after(form);
    form.querySelector('input').focus();
  }

  async function decide(act, ids, reason) {
    let ok = 0, owner = 0;
    const errs = [];
    for (const id of ids) {
      try {
        const rec = await c.api('POST', '/v1/review/' + encodeURIComponent(id) + '/' + act, reason ? { reason } : {});
        ok++;
        state.mine.add(id);
        if (rec.state === 'pending_confirmation') owner++;
      } catch (e) {
        errs.push(c.errText(e));
        if (e instanceof c.APIError && e.status === 401) return;
      }
    }
    let msg = (act === 'approve' ? 'Approved ' : 'Rejected ') + ok + ' of ' + ids.length + '.';
    if (owner) msg += ' ' + owner + (owner === 1 ? ' is a sensitive key: the owner must still confirm it (it is listed under My decisions until then).' : ' are sensitive keys: the owner must still confirm them (listed under My decisions).');
    if (errs.length) msg += ' ' + [...new Set(errs)].join(' ');
    c.status(msg, errs.length ? 'error' : 'ok');
    await loadQueue();
    if (state.shown.length) select(state.sel);
  }

  // target is the row and the items a key or click acts on: the item that
  // has focus, else the selected items of the row that has focus, else of
  // the selected row.
  function target(from) {
    const row = from && from.closest ? from.closest('.row') : null;
    const i = row ? Number(row.dataset.g) : state.sel;
    const g = state.shown[i];
    if (!g) return null;
    const item = from && from.closest ? from.closest('li.item') : null;
    const ids = item ? [item.dataset.id] : g.items.filter((it) => state.picked.has(it.id)).map((it) => it.id);
    return { i, ids };
  }

  function onClick(ev) {
    const b = ev.target.closest('button');
    const row = ev.target.closest('.row');
    if (!row) return;
    const i = Number(row.dataset.g);
    if (!b) { if (state.sel !== i) select(i, false); return; }
    const act = b.dataset.act;
    if (act === 'cancel') { b.closest('form').remove(); select(i); return; }
    if ((act === 'approve' || act === 'reject') && b.type === 'button') {
      const t = target(b);
      if (!t.ids.length) { c.status('Select at least one item of the row first.', 'error'); return; }
      openDecision(t.i, act, t.ids);
    }
  }

  function onChange(ev) {
    if (ev.target.matches('input.pick')) {
      if (ev.target.checked) state.picked.add(ev.target.dataset.id); else state.picked.delete(ev.target.dataset.id);
    } else if (ev.target.matches('#queue-tools select, #queue-tools input')) {
      render();
      state.sel = 0;
      markSelected();
    }
  }

  function onFocus(ev) {
    const row = ev.target.closest('.row');
    if (row && Number(row.dataset.g) !== state.sel) { state.sel = Number(row.dataset.g); markSelected(); }
  }

  function onKey(ev) {
    if ($('queue').hidden || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const typing = ev.target.matches('input:not([type=checkbox]), textarea, select');
    if (ev.key === 'Escape') {
      const f = document.querySelector('#queue .decide');
      if (f) { f.remove(); select(state.sel); ev.preventDefault(); }
      return;
    }
    if (typing || !state.shown.length) return;
    const from = document.activeElement && document.activeElement.closest('.row') ? document.activeElement : null;
    const act = (a) => () => {
      const t = target(from);
      if (!t.ids.length) { c.status('Select at least one item of the row first (space on its checkbox).', 'error'); return; }
      openDecision(t.i, a, t.ids);
    };
    const keys = { j: () => select(state.sel + 1), ArrowDown: () => select(state.sel + 1), k: () => select(state.sel - 1), ArrowUp: () => select(state.sel - 1),
      a: act('approve'), r: act('reject'),
      o: () => { const t = target(from); location.hash = '#record/' + (t.ids[0] || state.shown[t.i].items[0].id); } };
    if (ev.key === 'a' && !state.shown.some((g) => g.items.some(mayApprove))) return;
    if (ev.key === 'r' && !mayReject()) return;
    const f = keys[ev.key];
    if (f) { ev.preventDefault(); state.swallow = ev.key; f(); }
  }

  c.handlers.queue = () => { state.known = null; loadQueue().then(schedule); };

  document.addEventListener('DOMContentLoaded', () => {
    const rows = $('queue-rows');
    rows.addEventListener('click', onClick);
    rows.addEventListener('focusin', onFocus);
    $('queue').addEventListener('change', onChange);
    $('queue-refresh').addEventListener('click', () => loadQueue({ live: true }));
    document.addEventListener('keydown', onKey);
    document.addEventListener('keyup', () => { state.swallow = null; });
  });
})();

// custody review console. Plain script, no dependencies. It talks only to
// the public HTTP API; the bearer token lives in sessionStorage and is sent
// as an Authorization header, never in a cookie or a URL. Untrusted text
// (bodies, sources) is only ever set with textContent.
'use strict';

const TOKEN_KEY = 'custody.token';
const PAGE = 500; // the API's largest page
const MAX_ITEMS = 20000;

const $ = (id) => document.getElementById(id);
const state = { items: [], groups: [], sel: 0, open: null };

function el(tag, props, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v == null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of kids) if (c != null) e.append(c instanceof Node ? c : String(c));
  return e;
}

function status(text, kind) {
  const s = $('status');
  s.textContent = text || '';
  s.className = kind || '';
}

function token() { return sessionStorage.getItem(TOKEN_KEY); }

class APIError extends Error {
  constructor(status, message) { super(status + ': ' + message); this.status = status; }
}

// api calls the HTTP API with the token as a header; it throws APIError.
async function api(method, path, body) {
  const init = { method, headers: { Authorization: 'Bearer ' + token() }, credentials: 'omit', referrerPolicy: 'no-referrer', cache: 'no-store' };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const r = await fetch(path, init);
  const text = await r.text();
  if (!r.ok) {
    let msg = text;
    try { msg = JSON.parse(text).error.message; } catch (_) { /* not JSON */ }
    if (r.status === 401) signOut('The token was refused (401: ' + msg + '). Sign in again.');
    throw new APIError(r.status, msg);
  }
  return (r.headers.get('Content-Type') || '').includes('json') ? JSON.parse(text) : text;
}

function errText(e) {
  if (e instanceof APIError && e.status === 403) return '403 forbidden: ' + e.message.replace(/^403: /, '') + ' — nothing was changed.';
  return e instanceof APIError ? e.message : 'error: ' + e;
}

// ---- time and words ----

function dur(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
  if (d) return d + 'd ' + h + 'h';
  if (h) return h + 'h ' + m + 'm';
  if (m) return m + 'm';
  return s + 's';
}

function audienceWords(a, owner) {
  if (!a || a === 'owner') return 'its owner ' + owner + ' only';
  if (a === 'tenant') return 'everyone in the tenant';
  if (a.startsWith('group:')) return 'members of group ' + a.slice(6) + ', and ' + owner;
  return a;
}

// effect says in words what admitting it would do.
function effect(it) {
  const where = it.namespace + (it.key ? '/' + it.key : '');
  if (it.class === 'procedure') {
    return { text: 'A procedure: admitting it changes how agents behave for ' + audienceWords(it.audience, it.owner) + '.' };
  }
  if (it.proposed) {
    if (it.proposed.old != null) return { text: 'Replaces ' + where + ':', change: it.proposed.old + ' → ' + it.proposed.new };
    return { text: 'Sets ' + where + ' (no value yet):', change: '→ ' + it.proposed.new };
  }
  return { text: 'Adds a ' + it.class + ' to ' + where + ':', change: it.body };
}

function distinct(items, f, limit) {
  const vs = [...new Set(items.map(f).filter((v) => v !== '' && v != null))];
  if (!vs.length) return '—';
  const shown = vs.slice(0, limit || 4).join(', ');
  return vs.length > (limit || 4) ? shown + ' (+' + (vs.length - (limit || 4)) + ' more)' : shown;
}

// ---- the queue ----

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
  return out;
}

async function loadQueue() {
  const rows = $('queue-rows');
  let items = [], cursor = '';
  try {
    do {
      const page = await api('GET', '/v1/review?limit=' + PAGE + (cursor ? '&cursor=' + encodeURIComponent(cursor) : ''));
      items = items.concat(page.items);
      cursor = page.next_cursor;
    } while (cursor && items.length < MAX_ITEMS);
  } catch (e) {
    rows.replaceChildren(el('p', { class: 'error', text: 'The queue could not be read: ' + errText(e) }));
    $('queue-count').textContent = '';
    document.title = 'Review queue — custody';
    return;
  }
  state.items = items;
  state.truncated = !!cursor;
  state.groups = group(items);
  state.open = null;
  state.sel = Math.min(state.sel, Math.max(0, state.groups.length - 1));
  renderQueue();
}

function renderQueue() {
  const t0 = performance.now();
  const rows = $('queue-rows');
  const n = state.items.length;
  $('queue-count').textContent = '(' + n + (state.truncated ? '+' : '') + ' held in ' + state.groups.length + ' rows' + (state.truncated ? '; only the oldest ' + n + ' are shown' : '') + ')';
  document.title = '(' + n + ') Review queue — custody';
  const frag = document.createDocumentFragment();
  if (!n) frag.append(el('p', { text: 'Nothing is held for review.' }));
  const now = Date.now();
  state.groups.forEach((g, i) => frag.append(renderRow(g, i, now)));
  rows.replaceChildren(frag);
  rows.dataset.renderMs = String(Math.round(performance.now() - t0));
  rows.dataset.items = String(n);
}

function renderRow(g, i, now) {
  const its = g.items, first = its[0];
  const eff = effect(first);
  const oldest = Math.min(...its.map((it) => Date.parse(it.created_at)));
  const expires = Math.min(...its.map((it) => Date.parse(it.expires_review_at)));
  const left = expires - now;
  const rules = distinct(its, (it) => it.receipt ? it.receipt.rules.join(' + ') : '', 3);
  const reasons = distinct(its, (it) => it.receipt ? it.receipt.reason : '', 2);
  const effects = new Set(its.map((it) => JSON.stringify(effect(it))));
  const row = el('div', { class: 'row' + (i === state.sel ? ' selected' : ''), role: 'listitem', tabindex: '-1', 'data-g': i, 'aria-label': 'row ' + (i + 1) + ': ' + its.length + ' held' },
    el('h3', {}, el('span', { class: 'count', title: its.length + ' held items', text: its.length }),
      el('span', { class: 'effect', text: eff.text + ' ' }), eff.change != null ? el('span', { class: 'change', text: eff.change }) : null,
      effects.size > 1 ? el('span', { text: ' (and ' + (effects.size - 1) + (effects.size === 2 ? ' other effect' : ' other effects') + ': see Items)' }) : null),
    el('dl', { class: 'facts' },
      el('dt', { text: 'Channel' }), el('dd', { text: distinct(its, (it) => it.channel) }),
      el('dt', { text: 'Writer' }), el('dd', { text: distinct(its, (it) => it.writer) }),
      el('dt', { text: 'Source' }), el('dd', { class: 'source', text: distinct(its, (it) => it.source_ref) }),
      el('dt', { text: 'Owner' }), el('dd', { text: distinct(its, (it) => it.owner) }),
      el('dt', { text: 'Class' }), el('dd', { text: distinct(its, (it) => it.class) }),
      el('dt', { text: 'Would be seen by' }), el('dd', { class: 'audience', text: distinct(its, (it) => audienceWords(it.audience, it.owner), 2) + ' (authority confirmed)' }),
      el('dt', { text: 'Age' }), el('dd', { text: dur(now - oldest) }),
      el('dt', { text: 'Expires to rejected in' }), el('dd', { class: left < 86400000 ? 'expiring' : null, text: left > 0 ? dur(left) : 'now (the next sweep rejects it)' }),
      el('dt', { text: 'Held by' }), el('dd', { class: 'rules', text: rules + ' — ' + reasons })),
    el('button', { type: 'button', class: 'approve', 'data-act': 'approve', text: its.length > 1 ? 'Approve all ' + its.length : 'Approve' }),
    el('button', { type: 'button', class: 'reject', 'data-act': 'reject', text: its.length > 1 ? 'Reject all ' + its.length : 'Reject' }),
    el('button', { type: 'button', 'data-act': 'items', 'aria-expanded': 'false', text: 'Items' }));
  return row;
}

function rowEl(i) { return $('queue-rows').querySelector('[data-g="' + i + '"]'); }

function select(i, focus) {
  if (!state.groups.length) return;
  i = Math.max(0, Math.min(state.groups.length - 1, i));
  const prev = rowEl(state.sel);
  if (prev) prev.classList.remove('selected');
  state.sel = i;
  const r = rowEl(i);
  r.classList.add('selected');
  if (focus !== false) { r.focus({ preventScroll: true }); r.scrollIntoView({ block: 'nearest' }); }
}

function toggleItems(i) {
  const r = rowEl(i), btn = r.querySelector('[data-act="items"]');
  const old = r.querySelector('.members');
  if (old) { old.remove(); btn.setAttribute('aria-expanded', 'false'); return; }
  btn.setAttribute('aria-expanded', 'true');
  const ul = el('ul', { class: 'members' });
  for (const it of state.groups[i].items) {
    const e = effect(it);
    ul.append(el('li', {}, el('a', { href: '#record/' + it.id, text: it.id }), ' ' + it.channel + ' from ' + (it.source_ref || '(no source)') + ' for ' + it.owner + ': ' + e.text + ' ' + (e.change || ''),
      ' ', el('button', { type: 'button', class: 'approve', 'data-act': 'approve', 'data-id': it.id, text: 'Approve this' }),
      el('button', { type: 'button', class: 'reject', 'data-act': 'reject', 'data-id': it.id, text: 'Reject this' })));
  }
  r.append(ul);
}

// openDecision shows the confirm form of an approval or rejection of a row
// (or of one item of it, when id is given).
function openDecision(i, act, id) {
  select(i, false);
  const r = rowEl(i);
  const old = r.querySelector('.decide');
  if (old) old.remove();
  const ids = id ? [id] : state.groups[i].items.map((it) => it.id);
  const what = ids.length === 1 ? '1 item' : ids.length + ' items';
  const form = el('form', { class: 'decide', 'data-act': act },
    act === 'approve'
      ? el('p', { text: 'Approve ' + what + ': each is admitted with authority confirmed and seen by ' + audienceWords(state.groups[i].items[0].audience, state.groups[i].items[0].owner) + '. A sensitive key still waits for its owner to confirm.' })
      : el('label', { for: 'reason-' + i, text: 'Reject ' + what + ' — reason (kept in the receipt and the log)' }),
    act === 'approve' ? el('label', { for: 'reason-' + i, text: 'Reason (optional, kept in the receipt and the log)' }) : null,
    act === 'reject' ? el('input', { id: 'reason-' + i, name: 'reason', required: true }) : el('input', { id: 'reason-' + i, name: 'reason' }),
    el('button', { type: 'submit', class: act, text: (act === 'approve' ? 'Confirm approval of ' : 'Confirm rejection of ') + what }),
    el('button', { type: 'button', 'data-act': 'cancel', text: 'Cancel' }));
  form.addEventListener('submit', (ev) => { ev.preventDefault(); decide(i, act, ids, form.reason ? form.reason.value : ''); });
  // The shortcut that opened the form must not also type into it.
  form.addEventListener('beforeinput', (ev) => { if (state.swallow && ev.data === state.swallow) ev.preventDefault(); });
  r.append(form);
  (form.querySelector('input') || form.querySelector('button[type=submit]')).focus();
}

async function decide(i, act, ids, reason) {
  let ok = 0, owner = 0;
  const errs = [];
  for (const id of ids) {
    try {
      const rec = await api('POST', '/v1/review/' + encodeURIComponent(id) + '/' + act, reason ? { reason } : {});
      ok++;
      if (rec.state === 'pending_confirmation') owner++;
    } catch (e) {
      errs.push(errText(e));
      if (e instanceof APIError && e.status === 401) return;
    }
  }
  const verb = act === 'approve' ? 'Approved' : 'Rejected';
  let msg = verb + ' ' + ok + ' of ' + ids.length + '.';
  if (owner) msg += ' ' + owner + (owner === 1 ? ' is a sensitive key: the owner must still confirm it.' : ' are sensitive keys: the owner must still confirm them.');
  if (errs.length) msg += ' ' + [...new Set(errs)].join(' ');
  status(msg, errs.length ? 'error' : 'ok');
  await loadQueue();
  if (state.groups.length) select(state.sel);
}

function onQueueClick(ev) {
  const b = ev.target.closest('button');
  const r = ev.target.closest('.row');
  if (!r) return;
  const i = Number(r.dataset.g);
  if (!b) { select(i, false); return; }
  const act = b.dataset.act;
  if (act === 'items') toggleItems(i);
  else if (act === 'cancel') { b.closest('form').remove(); select(i); }
  else if ((act === 'approve' || act === 'reject') && b.type === 'button') openDecision(i, act, b.dataset.id);
}

function onKey(ev) {
  if (currentRoute().page !== 'queue' || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const typing = ev.target.matches('input, textarea');
  if (ev.key === 'Escape') {
    const f = document.querySelector('.decide');
    if (f) { f.remove(); select(state.sel); ev.preventDefault(); }
    return;
  }
  if (typing || !state.groups.length) return;
  const keys = { j: () => select(state.sel + 1), ArrowDown: () => select(state.sel + 1), k: () => select(state.sel - 1), ArrowUp: () => select(state.sel - 1),
    a: () => openDecision(state.sel, 'approve'), r: () => openDecision(state.sel, 'reject'),
    o: () => { location.hash = '#record/' + state.groups[state.sel].items[0].id; } };
  const f = keys[ev.key];
  if (f) { ev.preventDefault(); state.swallow = ev.key; f(); }
}

// ---- routing and sign-in ----

function currentRoute() {
  const h = location.hash.replace(/^#/, '');
  const [page, ...rest] = h.split('/');
  return { page: ['queue', 'record', 'impact', 'log'].includes(page) ? page : 'queue', arg: rest.join('/') };
}

function show(id) {
  for (const s of ['signin', 'queue', 'record', 'impact', 'log']) $(s).hidden = s !== id;
  for (const a of document.querySelectorAll('nav a')) {
    if (a.id === 'nav-' + id) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
}

function route() {
  if (!token()) {
    $('nav').hidden = true;
    show('signin');
    document.title = 'Sign in — custody review console';
    $('token').focus();
    return;
  }
  $('nav').hidden = false;
  const r = currentRoute();
  show(r.page);
  if (r.page === 'queue') loadQueue();
  else if (r.page === 'record') window.custodyStory(r.arg);
  else if (r.page === 'impact') window.custodyImpact(r.arg);
  else window.custodyLog();
}

function signOut(msg) {
  sessionStorage.removeItem(TOKEN_KEY);
  status(msg || 'Signed out.', msg ? 'error' : 'ok');
  route();
}

async function signIn(ev) {
  ev.preventDefault();
  const t = $('token').value.trim();
  $('token').value = '';
  sessionStorage.setItem(TOKEN_KEY, t);
  try {
    await api('GET', '/v1/log/checkpoint');
  } catch (e) {
    if (token()) { sessionStorage.removeItem(TOKEN_KEY); status('Sign-in failed: ' + errText(e), 'error'); }
    return;
  }
  status('Signed in.', 'ok');
  if (!location.hash) location.hash = '#queue'; else route();
}

window.custody = { api, el, status, errText, dur, audienceWords, APIError };

document.addEventListener('DOMContentLoaded', () => {
  $('signin-form').addEventListener('submit', signIn);
  $('signout').addEventListener('click', () => signOut());
  $('queue-rows').addEventListener('click', onQueueClick);
  document.addEventListener('keydown', onKey);
  document.addEventListener('keyup', () => { state.swallow = null; });
  window.addEventListener('hashchange', () => { status(''); route(); });
  route();
});

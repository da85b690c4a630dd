// custody review console: the core. Plain script, no dependencies. It
// talks only to the public HTTP API; the bearer token lives in
// sessionStorage and is sent as an Authorization header, never in a cookie
// or a URL. Untrusted text (bodies, sources, keys, reasons) is only ever
// set with textContent, inside an isolating <bdi class="u"> that shows
// control and invisible characters as visible marks (untrusted()).
'use strict';

(() => {
  const TOKEN_KEY = 'custody.token';
  const $ = (id) => document.getElementById(id);
  const me = { roles: [] };

  function el(tag, props, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v == null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const c of kids) if (c != null && c !== false) e.append(c instanceof Node ? c : String(c));
    return e;
  }

  // Characters that move or hide text: C0 and C1 controls (but newline and
  // tab), bidi embeddings, overrides, isolates and marks, zero-width and
  // other invisible format characters, the BOM, the soft hyphen, variation
  // selectors and tag characters.
  const HIDDEN = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u00AD\u034F\u061C\u115F\u1160\u17B4\u17B5\u180B-\u180F\u200B-\u200F\u202A-\u202E\u2060-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFA0\uFFF9-\uFFFB]|\uDB40[\uDC00-\uDDFF]/g;
  const NAMES = { '\u202A': 'LRE', '\u202B': 'RLE', '\u202C': 'PDF', '\u202D': 'LRO', '\u202E': 'RLO', '\u2066': 'LRI', '\u2067': 'RLI',
    '\u2068': 'FSI', '\u2069': 'PDI', '\u200E': 'LRM', '\u200F': 'RLM', '\u061C': 'ALM', '\u200B': 'ZWSP', '\u200C': 'ZWNJ',
    '\u200D': 'ZWJ', '\u2060': 'WJ', '\uFEFF': 'BOM', '\u00AD': 'SHY' };

  function codepoint(ch) {
    const cp = ch.codePointAt(0).toString(16).toUpperCase().padStart(4, '0');
    return 'U+' + cp + (NAMES[ch] ? ' ' + NAMES[ch] : '');
  }

  // untrusted renders text that came from outside the console: isolated
  // from the layout around it, its hidden characters made visible, set
  // apart from the console's own words, and, when longer than collapse
  // characters, cut with a toggle that shows the rest.
  function untrusted(text, opts) {
    const o = opts || {};
    const s = text == null ? '' : String(text);
    const b = el('bdi', { class: 'u' + (o.block ? ' block' : '') });
    const fill = (str) => {
      const frag = document.createDocumentFragment();
      let last = 0;
      for (const m of str.matchAll(HIDDEN)) {
        if (m.index > last) frag.append(str.slice(last, m.index));
        frag.append(el('span', { class: 'ctl', title: 'an invisible character in the text: ' + codepoint(m[0]), text: '⟨' + codepoint(m[0]) + '⟩' }));
        last = m.index + m[0].length;
      }
      if (last < str.length) frag.append(str.slice(last));
      return frag;
    };
    if (s === '') { b.append(el('span', { class: 'empty', text: '(empty)' })); return b; }
    const limit = o.collapse || 0;
    if (!limit || s.length <= limit) { b.append(fill(s)); return b; }
    const part = el('span', {}, fill(s.slice(0, limit)));
    const more = el('span', { hidden: true }, fill(s.slice(limit)));
    const dots = el('span', { class: 'cut', text: '…' });
    const toggle = el('button', { type: 'button', class: 'toggle', 'aria-expanded': 'false', text: 'Show all ' + s.length.toLocaleString('en') + ' characters' });
    toggle.addEventListener('click', () => {
      const open = more.hidden;
      more.hidden = !open;
      dots.hidden = open;
      toggle.setAttribute('aria-expanded', String(open));
      toggle.textContent = open ? 'Show less' : 'Show all ' + s.length.toLocaleString('en') + ' characters';
    });
    b.append(part, dots, more);
    return el('span', { class: 'collapsible' }, b, ' ', toggle);
  }

  // wrap puts a table in a box that scrolls sideways when the table is
  // wider than the page, reachable by the keyboard so it can be scrolled.
  function wrap(node, label) {
    return el('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': label || 'table' }, node);
  }

  // hasHidden reports whether text holds characters untrusted() marks.
  const hasHidden = (text) => new RegExp(HIDDEN.source).test(text || '');

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

  // when renders an RFC 3339 time as "2026-12-04 12:43 UTC (5m ago)", the
  // exact time in the title and datetime.
  function when(iso) {
    const t = Date.parse(iso);
    if (!iso || Number.isNaN(t) || t <= 0) return el('span', { text: '—' });
    const d = new Date(t).toISOString();
    const ago = Date.now() - t;
    const rel = ago >= 0 ? ' (' + dur(ago) + ' ago)' : ' (in ' + dur(-ago) + ')';
    return el('time', { datetime: iso, title: iso, text: d.slice(0, 10) + ' ' + d.slice(11, 16) + ' UTC' + rel });
  }

  function audienceWords(a, owner) {
    if (!a || a === 'owner') return 'its owner ' + owner + ' only';
    if (a === 'tenant') return 'everyone in the tenant';
    if (a.startsWith('group:')) return 'members of group ' + a.slice(6) + ', and ' + owner;
    return a;
  }

  const has = (...roles) => roles.some((r) => me.roles.includes(r));
  const reviews = () => has('reviewer', 'admin', 'policy_owner');

  // ---- routing and sign-in ----

  const PAGES = ['queue', 'mine', 'decisions', 'record', 'impact', 'log'];
  const handlers = {};

  function currentRoute() {
    const h = location.hash.replace(/^#/, '');
    const [page, ...rest] = h.split('/');
    return { page: PAGES.includes(page) ? page : (reviews() ? 'queue' : 'mine'), arg: rest.join('/') };
  }

  function show(id) {
    for (const s of ['signin', ...PAGES]) $(s).hidden = s !== id;
    for (const a of document.querySelectorAll('nav a')) {
      if (a.id === 'nav-' + id) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
    }
  }

  function route() {
    if (!token()) {
      $('nav').hidden = true;
      $('whoami').textContent = '';
      show('signin');
      document.title = 'Sign in — custody console';
      $('token').focus();
      return;
    }
    $('nav').hidden = false;
    $('nav-queue').hidden = !reviews();
    $('nav-impact').hidden = !has('reviewer', 'admin');
    $('nav-mine').hidden = !has('user');
    $('whoami').textContent = me.tenant ? 'Signed in as ' + me.tenant + '/' + me.name + ' (' + me.roles.join(', ') + ')' : '';
    const r = currentRoute();
    show(r.page);
    const h = handlers[r.page];
    if (h) h(r.arg);
  }

  function signOut(msg) {
    sessionStorage.removeItem(TOKEN_KEY);
    me.roles = []; me.tenant = ''; me.name = '';
    status(msg || 'Signed out.', msg ? 'error' : 'ok');
    route();
  }

  // whoami reads the principal the token names; the console is for
  // reviewers, policy owners, admins and users, not for agents.
  async function whoami() {
    const p = await api('GET', '/v1/me');
    Object.assign(me, p);
    if (!p.roles.some((r) => ['reviewer', 'admin', 'policy_owner', 'user'].includes(r))) {
      throw new Error('this token is ' + p.tenant + '/' + p.name + ', a principal with roles ' + p.roles.join(', ') +
        ': the console is for reviewers, policy owners, admins and users. Sign in with a reviewer\'s token, or a user\'s own token for her page.');
    }
  }

  async function signIn(ev) {
    ev.preventDefault();
    const t = $('token').value.trim();
    $('token').value = '';
    sessionStorage.setItem(TOKEN_KEY, t);
    try {
      await whoami();
    } catch (e) {
      if (token()) { sessionStorage.removeItem(TOKEN_KEY); status('Sign-in failed: ' + (e instanceof APIError ? errText(e) : e.message), 'error'); }
      $('token').focus();
      return;
    }
    status('Signed in.', 'ok');
    if (!location.hash) history.replaceState(null, '', '#' + (reviews() ? 'queue' : 'mine'));
    route();
    const first = [...document.querySelectorAll('nav a')].find((a) => !a.hidden);
    if (first) first.focus(); // the navigation first, then the page
  }

  async function start() {
    if (token()) {
      try { await whoami(); } catch (e) { signOut('Sign-in failed: ' + (e instanceof APIError ? errText(e) : e.message)); return; }
    }
    route();
  }

  window.custody = { api, el, wrap, untrusted, hasHidden, status, errText, dur, when, audienceWords, APIError, me, has, reviews, handlers, route, $ };

  document.addEventListener('DOMContentLoaded', () => {
    $('signin-form').addEventListener('submit', signIn);
    $('signout').addEventListener('click', () => signOut());
    window.addEventListener('hashchange', () => { status(''); route(); });
    start();
  });
})();

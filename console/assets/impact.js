// custody review console: a record's impact — what a suspect record
// reached: its descendants, the sessions whose reads returned it and the
// gate decisions that relied on it. Uses window.custody from console.js.
'use strict';

(() => {
  const c = window.custody;
  const { el, untrusted, $ } = c;

  function table(cls, heads, rows) {
    const t = el('table', { class: cls }, el('thead', {}, el('tr', {}, ...heads.map((h) => el('th', { scope: 'col', text: h })))));
    const tb = el('tbody');
    for (const r of rows) {
      const cells = r.cells || r;
      tb.append(el('tr', r.attrs || {}, ...cells.map((v) => (v instanceof Node ? el('td', {}, v) : el('td', { text: v == null ? '' : String(v) })))));
    }
    t.append(tb);
    return c.wrap(t, cls);
  }

  const link = (id) => el('a', { href: '#record/' + id, text: id });
  const where = (x) => x.namespace + (x.key ? '/' + x.key : '');

  // decisions joins the references of one gate decision (a record cited
  // and another traced, or one both) into one row per decision.
  function decisions(refs) {
    const by = new Map();
    for (const d of refs) {
      let g = by.get(d.log_index);
      if (!g) { g = { ...d, records: [], hows: new Set() }; by.set(d.log_index, g); }
      g.records.push(d.record);
      g.hows.add(d.how === 'traced' ? 'an argument value traced to it' : 'cited as justification');
    }
    return [...by.values()];
  }

  async function impact(id) {
    const out = $('impact-body');
    $('impact-id').value = id || '';
    if (!id) { out.replaceChildren(el('p', { text: 'Give a record id, or open one from its story (What it reached).' })); return; }
    let imp;
    try {
      imp = await c.api('GET', '/v1/memories/' + encodeURIComponent(id) + '/impact');
    } catch (e) {
      out.replaceChildren(el('p', { class: 'error', text: 'The impact could not be read: ' + c.errText(e) }));
      return;
    }
    const r = imp.record;
    document.title = 'Impact of ' + r.id + ' — custody';
    const ds = decisions(imp.decisions);
    const decTable = table('impact-decisions', ['Log index', 'Action', 'Decision', 'Record', 'How', 'Subject', 'Session', 'At'],
      ds.map((d) => ({ attrs: { 'data-session': d.session || '' }, cells: [String(d.log_index), untrusted(d.action), d.decision, el('span', {}, ...d.records.flatMap((x, i) => [i ? ', ' : '', link(x)])),
        [...d.hows].join('; '), d.subject, d.session || '', c.when(d.at)] })));
    const sessionLink = (s) => {
      const a = el('a', { href: '#impact/' + r.id, class: 'session-link', 'data-session': s, text: s, title: 'show only the gate decisions of session ' + s });
      a.addEventListener('click', (ev) => {
        ev.preventDefault();
        let n = 0;
        for (const tr of decTable.querySelectorAll('tbody tr')) { tr.hidden = tr.dataset.session !== s; n += tr.hidden ? 0 : 1; }
        c.status('Showing the ' + n + ' gate decision(s) of session ' + s + '. Show all: reopen the page.', 'ok');
        decTable.scrollIntoView({ block: 'nearest' });
      });
      return a;
    };
    out.replaceChildren(
      el('h3', {}, 'Record ', link(r.id)),
      el('p', {}, untrusted(where(r)), ' · ' + r.class + ' · ' + r.state + ' · authority ' + r.authority + ' · channel ' + r.channel + ' · owner ' + r.owner),
      el('h3', { text: 'Descendants (' + imp.descendants.length + ')' }),
      imp.descendants.length
        ? table('impact-descendants', ['Record', 'Namespace/key', 'Class', 'State', 'Channel', 'Owner'],
          imp.descendants.map((d) => [link(d.id), untrusted(where(d)), d.class, d.state, d.channel, d.owner]))
        : el('p', { text: 'Nothing was derived from it.' }),
      el('h3', { text: 'Sessions that read it (' + imp.sessions.length + ')' }),
      el('p', { class: 'help' }, 'Reads are kept since ', c.when(imp.reads_since), ' (the server\'s read retention). Quarantining or retiring the record holds what these sessions write next for review. A session\'s id shows its gate decisions.'),
      imp.sessions.length
        ? table('impact-sessions', ['Session', 'Subject', 'Opened by', 'Record read', 'Via', 'Reads', 'First read', 'Last read'],
          imp.sessions.map((s) => [sessionLink(s.session), s.subject, s.opened_by, s.record, s.via.join(', '), s.reads, c.when(s.first_read_at), c.when(s.last_read_at)]))
        : el('p', { text: 'No session read it, or no read of it is kept.' }),
      el('h3', { text: 'Gate decisions that relied on it (' + ds.length + ')' }),
      ds.length ? decTable : el('p', { text: 'No gate decision cited it or traced an argument to it.' }));
  }

  c.handlers.impact = impact;

  document.addEventListener('DOMContentLoaded', () => {
    $('impact-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      location.hash = '#impact/' + $('impact-id').value.trim();
    });
  });
})();

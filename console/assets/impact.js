// custody review console: a record's impact — what a suspect record
// reached: its descendants, the sessions whose reads returned it and the
// gate decisions that relied on it. Uses window.custody from console.js.
'use strict';

(() => {
  const $ = (id) => document.getElementById(id);
  const c = () => window.custody;

  function table(cls, heads, rows) {
    const { el } = c();
    const t = el('table', { class: cls }, el('tr', {}, ...heads.map((h) => el('th', { scope: 'col', text: h }))));
    for (const cells of rows) t.append(el('tr', {}, ...cells.map((v) => (v instanceof Node ? el('td', {}, v) : el('td', { text: v == null ? '' : String(v) })))));
    return t;
  }

  const link = (id) => c().el('a', { href: '#record/' + id, text: id });

  async function impact(id) {
    const { api, el, errText } = c();
    const out = $('impact-body');
    $('impact-id').value = id || '';
    if (!id) { out.replaceChildren(el('p', { text: 'Give a record id, or open one from its story (What it reached).' })); return; }
    let imp;
    try {
      imp = await api('GET', '/v1/memories/' + encodeURIComponent(id) + '/impact');
    } catch (e) {
      out.replaceChildren(el('p', { class: 'error', text: 'The impact could not be read: ' + errText(e) }));
      return;
    }
    const r = imp.record;
    document.title = 'Impact of ' + r.id + ' — custody';
    const where = (x) => x.namespace + (x.key ? '/' + x.key : '');
    out.replaceChildren(
      el('h3', {}, 'Record ', link(r.id)),
      el('p', { text: where(r) + ' · ' + r.class + ' · ' + r.state + ' · authority ' + r.authority + ' · channel ' + r.channel + ' · owner ' + r.owner }),
      el('h3', { text: 'Descendants (' + imp.descendants.length + ')' }),
      imp.descendants.length
        ? table('impact-descendants', ['Record', 'Namespace/key', 'Class', 'State', 'Channel', 'Owner'],
          imp.descendants.map((d) => [link(d.id), where(d), d.class, d.state, d.channel, d.owner]))
        : el('p', { text: 'Nothing was derived from it.' }),
      el('h3', { text: 'Sessions that read it (' + imp.sessions.length + ')' }),
      el('p', { class: 'help', text: 'Reads are kept since ' + imp.reads_since + ' (the server\'s read retention). Quarantining or retiring the record holds what these sessions write next for review.' }),
      imp.sessions.length
        ? table('impact-sessions', ['Session', 'Subject', 'Opened by', 'Record read', 'Via', 'Reads', 'First read', 'Last read'],
          imp.sessions.map((s) => [s.session, s.subject, s.opened_by, s.record, s.via.join(', '), s.reads, s.first_read_at, s.last_read_at]))
        : el('p', { text: 'No session read it, or no read of it is kept.' }),
      el('h3', { text: 'Gate decisions that relied on it (' + imp.decisions.length + ')' }),
      imp.decisions.length
        ? table('impact-decisions', ['Log index', 'Action', 'Decision', 'Record', 'How', 'Subject', 'Session', 'At'],
          imp.decisions.map((d) => [d.log_index, d.action, d.decision, d.record, d.how === 'traced' ? 'an argument value traced to it' : 'cited as justification', d.subject, d.session || '', d.at]))
        : el('p', { text: 'No gate decision cited it or traced an argument to it.' }));
  }

  window.custodyImpact = impact;

  document.addEventListener('DOMContentLoaded', () => {
    $('impact-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      location.hash = '#impact/' + $('impact-id').value.trim();
    });
  });
})();

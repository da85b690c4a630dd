// custody review console: the owner's page (what waits for her
// confirmation, what was held from her agents' writes, her recent
// decisions) and anyone's own decisions, read from the log. Uses
// window.custody from console.js.
'use strict';

(() => {
  const c = window.custody;
  const { el, untrusted, $ } = c;
  const where = (r) => r.namespace + (r.key ? '/' + r.key : '');
  
  function table(cls, heads, rows) {
    const t = el('table', { class: cls }, el('thead', {}, el('tr', {}, ...heads.map((h) => el('th', { scope: 'col', text: h })))));
    const tb = el('tbody');
    for (const cells of rows) tb.append(el('tr', {}, ...cells.map((v) => (v instanceof Node ? el('td', {}, v) : el('td', { text: v == null ? '' : String(v) })))));
    t.append(tb);
    return c.wrap(t, cls);
  }

  const WORDS = { approve: 'approved', reject: 'rejected', confirm: 'confirmed', quarantine: 'quarantined', retire: 'retired', rebuild: 'rebuilt', confirm_action: 'confirmed the action' };

  // decisionRows lists decisions with what they decided and their receipt.
  function decisionTable(items) {
    return table('decisions', ['When', 'Decision', 'Record', 'What was decided', 'Reason', 'State now', 'Log index'], items.map((d) => {
      const r = d.record;
      const what = d.transition === 'confirm_action'
        ? el('span', {}, 'the action ', untrusted(d.action))
        : r ? el('span', {}, untrusted(where(r)), ' (' + r.class + ' for ' + r.owner + ')', r.withheld ? '' : ': ', r.withheld ? null : untrusted(r.body, { collapse: 200 })) : '';
      const now = r ? r.state + (r.state === 'pending_confirmation' ? ' (waiting for ' + r.owner + '\'s confirmation)' : '') : '';
      return [c.when(d.time), (WORDS[d.transition] || d.transition) + (d.new_state ? ' → ' + d.new_state : ''),
        d.record_id ? el('a', { href: '#record/' + d.record_id, text: d.record_id }) : '', what, untrusted(d.reason || ''), now, String(d.log_index)];
    }));
  }

  async function decisions() {
    const out = $('decisions-body');
    document.title = 'My decisions — custody';
    const items = [];
    let before = 0;
    const more = el('button', { type: 'button', id: 'decisions-older', text: 'Older decisions' });
    const draw = () => out.replaceChildren(items.length ? decisionTable(items) : el('p', { text: 'No decision of yours is in the log.' }), before ? more : '');
    const load = async () => {
      try {
        const page = await c.api('GET', '/v1/decisions?limit=100' + (before ? '&before=' + before : ''));
        items.push(...page.items);
        before = page.next_before;
        draw();
      } catch (e) {
        out.replaceChildren(el('p', { class: 'error', text: 'Your decisions could not be read: ' + c.errText(e) }));
      }
    };
    more.addEventListener('click', load);
    await load();
  }

  async function all(path) {
    let items = [], cursor = '';
    do {
      const page = await c.api('GET', path + '?limit=500' + (cursor ? '&cursor=' + encodeURIComponent(cursor) : ''));
      items = items.concat(page.items);
      cursor = page.next_cursor;
    } while (cursor && items.length < 5000);
    return items;
  }

  function pendingCard(it) {
    const old = it.in_force;
    const rc = it.receipt || {};
    const card = el('div', { class: 'pending row', 'data-id': it.id },
      el('h4', {}, 'Change ', untrusted(where(it)), it.in_force ? '' : ' (first value)'),
      el('dl', { class: 'proposal' },
        el('dt', { text: 'In force now' }), el('dd', { class: 'old' }, old ? untrusted(old.body, { collapse: 300 }) : el('span', { class: 'empty', text: '(no value)' }),
          old ? el('span', { class: 'help' }, ' version ' + old.version + ', since ', c.when(old.created_at), ', ' + old.channel + ' by ' + old.writer) : null),
        el('dt', { text: 'Proposed' }), el('dd', { class: 'new' }, untrusted(it.body, { collapse: 300 }))),
      el('dl', { class: 'facts' },
        el('dt', { text: 'Proposed by' }), el('dd', { text: it.writer + ' on channel ' + it.channel }),
        el('dt', { text: 'From source' }), el('dd', {}, untrusted(it.source_ref || '(none)')),
        el('dt', { text: 'Approved by' }), el('dd', {}, it.approved_by ? it.approved_by + ' — ' : 'no reviewer (it came straight to you)', it.approved_by ? untrusted(rc.reason) : null),
        el('dt', { text: 'Written' }), el('dd', {}, c.when(it.created_at))),
      el('div', { class: 'row-actions' },
        el('button', { type: 'button', class: 'approve', 'data-act': 'confirm', text: 'Confirm…' }),
        el('button', { type: 'button', class: 'reject', 'data-act': 'decline', text: 'Decline…' })),
      el('p', { class: 'result', role: 'status' }));
    card.addEventListener('click', (ev) => {
      const b = ev.target.closest('button[type=button]');
      if (b && (b.dataset.act === 'confirm' || b.dataset.act === 'decline')) openForm(card, it, b.dataset.act);
      if (b && b.dataset.act === 'cancel') closeForm(card);
    });
    return card;
  }

  function closeForm(card) {
    const f = card.querySelector('form');
    if (f) f.remove();
    card.querySelector('button[data-act]').focus();
  }

  function openForm(card, it, act) {
    const old = card.querySelector('form');
    if (old) old.remove();
    const yes = act === 'confirm';
    const id = 'owner-reason-' + it.id;
    const form = el('form', { class: 'decide', 'data-act': act },
      el('p', { class: 'effect', text: yes
        ? 'Confirm: ' + where(it) + ' becomes the proposed value, with authority confirmed; the value in force now is replaced.'
        : 'Decline: the proposal is rejected and ' + where(it) + ' keeps the value in force now.' }),
      el('label', { for: id, text: yes ? 'Reason (optional, kept in the receipt and the log)' : 'Reason for declining (required, kept in the receipt and the log)' }),
      el('input', { id, name: 'reason', required: !yes }),
      el('button', { type: 'submit', class: yes ? 'approve' : 'reject', text: yes ? 'Confirm the change' : 'Decline the change' }),
      el('button', { type: 'button', 'data-act': 'cancel', text: 'Cancel' }));
    form.addEventListener('keydown', (ev) => { if (ev.key === 'Escape') { ev.preventDefault(); closeForm(card); } });
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const reason = form.reason.value.trim();
      const out = card.querySelector('.result');
      try {
        const path = yes ? '/v1/memories/' + encodeURIComponent(it.id) + '/confirm' : '/v1/review/' + encodeURIComponent(it.id) + '/reject';
        const rec = await c.api('POST', path, reason ? { reason } : {});
        let msg = yes ? 'Confirmed: ' + where(it) + ' is now the proposed value (' + rec.state + ').' : 'Declined: ' + where(it) + ' keeps the value in force.';
        if (yes) {
          try {
            const l = await c.api('GET', '/v1/memories/' + encodeURIComponent(it.id) + '/lineage');
            const sus = l.descendants.filter((d) => d.state === 'suspended').length;
            if (sus) msg += ' ' + sus + (sus === 1 ? ' record derived from it stays suspended' : ' records derived from it stay suspended') + ' until a reviewer rebuilds it from its story (Rebuild).';
          } catch (_) { /* the lineage is a hint only */ }
        }
        c.status(msg, 'ok');
        await mine();
      } catch (e) {
        out.textContent = c.errText(e);
        out.className = 'result error';
      }
    });
    card.querySelector('.row-actions').after(form);
    form.querySelector('input').focus();
  }

  async function mine() {
    const out = $('mine-body');
    document.title = 'Waiting for me — custody';
    if (!c.has('user')) {
      out.replaceChildren(el('p', { text: 'This page is a user\'s: sign in with her own token to see what waits for her confirmation.' }));
      return;
    }
    let pending, held, decs;
    try {
      [pending, held, decs] = await Promise.all([all('/v1/confirmations'), all('/v1/held'), c.api('GET', '/v1/decisions?limit=50')]);
    } catch (e) {
      out.replaceChildren(el('p', { class: 'error', text: 'Your page could not be read: ' + c.errText(e) }));
      return;
    }
    document.title = '(' + pending.length + ') Waiting for me — custody';
    out.replaceChildren(
      el('h3', { id: 'mine-pending-h', text: 'Waiting for your confirmation (' + pending.length + ')' }),
      el('p', { class: 'help', text: 'Changes to sensitive keys (payees, accounts, addresses, ...) take effect only when you confirm them; until then the value in force stays. Confirming or declining is logged and signed with your key.' }),
      pending.length ? el('div', { id: 'mine-pending', role: 'list' }, ...pending.map((it) => { const card = pendingCard(it); card.setAttribute('role', 'listitem'); return card; }))
        : el('p', { text: 'Nothing waits for your confirmation.' }),
      el('h3', { text: 'Held from your agents\' writes (' + held.length + ')' }),
      el('p', { class: 'help', text: 'Writes for you that admission held for a reviewer, and why. Their text is not shown here: a reviewer decides on them.' }),
      held.length ? table('held', ['Written', 'Where', 'Class', 'Channel', 'Writer', 'Source', 'Session', 'State', 'Held by', 'Why'], held.map((r) => [
        c.when(r.created_at), untrusted(where(r)), r.class, r.channel, r.writer, untrusted(r.source_ref || ''), r.session || '', r.state,
        (r.receipt ? r.receipt.rules : []).join(', '), untrusted(r.receipt ? r.receipt.reason : '')]))
        : el('p', { text: 'Nothing of yours is held.' }),
      el('h3', { text: 'Your recent decisions and gate confirmations' }),
      decs.items.length ? decisionTable(decs.items) : el('p', { text: 'You have decided nothing yet.' }));
  }

  c.handlers.mine = mine;
  c.handlers.decisions = decisions;
  c.decisionTable = decisionTable;
  c.table = table;
})();

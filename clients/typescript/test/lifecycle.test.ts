// The routes of principals, pauses, erasure, namespaces and the log's status
// through the TypeScript client, against a real server.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { ConflictError, CustodyClient, ForbiddenError, NotFoundError, UnauthenticatedError } from '../src/index.js';
import { Server } from './server.js';

const s = new Server();
const tok: Record<string, string> = {};
const client = (who: string) => new CustodyClient({ baseUrl: s.url, token: tok[who] });
const withToken = (token: string) => new CustodyClient({ baseUrl: s.url, token });

before(async () => {
  tok.admin = s.principal('ada', '--role', 'admin');
  tok.reviewer = s.principal('rita', '--role', 'reviewer');
  for (const name of ['dora', 'erin', 'finn', 'gail', 'hugo']) tok[name] = s.principal(name, '--role', 'user', '--channel', 'user');
  await s.start();
});
after(() => s.stop());

const note = (body: string, namespace = 'notes') => ({ namespace, class: 'fact' as const, body, channel: 'user' });

describe('principals', () => {
  test('list, get, update', async () => {
    const admin = client('admin');
    assert.ok((await admin.principals()).some((p) => p.name === 'dora'));
    const p = await admin.principal('gail');
    assert.deepEqual([p.name, p.tenant, p.roles, p.status], ['gail', 'acme', ['user'], 'active']);
    const up = await admin.updatePrincipal('gail', { channels: ['user'], groups: ['team'], reason: 'scope' });
    assert.deepEqual([up.channels, up.groups, up.roles], [['user'], ['team'], ['user']]);
    assert.deepEqual((await admin.principal('gail')).groups, ['team']);
    assert.ok((await admin.principal('nobody').catch((e) => e)) instanceof NotFoundError);
    assert.ok((await client('gail').principals().catch((e) => e)) instanceof ForbiddenError);
  });

  test('rotate, then revoke', async () => {
    const admin = client('admin');
    const old = client('dora');
    await old.remember(note('before rotation'));
    const rot = await admin.rotatePrincipal('dora', { reason: 'laptop lost' });
    assert.equal(rot.principal.name, 'dora');
    assert.notEqual(rot.token, tok.dora);
    const fresh = withToken(rot.token);
    assert.equal((await fresh.remember(note('after rotation'))).state, 'admitted');
    const refused = await old.remember(note('with the old token')).catch((e) => e);
    assert.ok(refused instanceof UnauthenticatedError);
    assert.deepEqual([refused.status, refused.code], [401, 'unauthenticated']);
    assert.equal((await admin.revokePrincipal('dora', { reason: 'left the team' })).status, 'revoked');
    assert.ok((await fresh.list({ namespace: 'notes' }).catch((e) => e)) instanceof UnauthenticatedError);
    assert.equal((await client('hugo').remember(note('still here'))).state, 'admitted');
  });
});

describe('pauses', () => {
  test('a paused channel is held, then decided as before', async () => {
    // the user channel, tenant-wide: the tests of this file run one at a time
    const rev = client('reviewer');
    const finn = client('finn');
    const before = await finn.remember(note('the meeting is at 10', 'feed'));
    assert.equal(before.state, 'admitted');
    const p = await rev.pause({ channel: 'user', reason: 'chat relay compromised' });
    assert.deepEqual([p.channel, p.reason, p.resumed_at], ['user', 'chat relay compromised', undefined]);
    try {
      assert.ok((await rev.pauses()).some((x) => x.id === p.id));
      const held = await finn.remember(note('the meeting moved to 11', 'feed'));
      assert.equal(held.state, 'quarantined');
      assert.ok(held.receipt?.rules?.includes(`pause:${p.id}`), JSON.stringify(held.receipt));
      assert.match(held.reason ?? '', /chat relay compromised/);
    } finally {
      assert.ok((await rev.resume(p.id)).resumed_at);
    }
    assert.ok(!(await rev.pauses()).some((x) => x.id === p.id));
    assert.ok((await rev.pauses({ all: true })).some((x) => x.id === p.id));
    const after = await finn.remember(note('the meeting is at 12', 'feed'));
    assert.equal(after.state, before.state);
    assert.ok(!(after.receipt?.rules ?? []).some((r) => r.startsWith('pause:')));
    assert.ok((await rev.resume(p.id).catch((e) => e)) instanceof ConflictError);
    assert.ok((await finn.pause({ channel: 'user', reason: 'not mine to pause' }).catch((e) => e)) instanceof ForbiddenError);
  });

  test('approve with a reason', async () => {
    const rev = client('reviewer');
    const p = await rev.pause({ writer: 'finn', for: '1h', reason: 'checking finn' });
    let held;
    try {
      held = await client('finn').remember(note('held for review', 'feed'));
      assert.equal(held.state, 'quarantined');
    } finally {
      await rev.resume(p.id);
    }
    const approved = await rev.approve(held.id, { reason: 'checked with finn' });
    assert.equal(approved.state, 'admitted');
    assert.match(approved.receipt?.reason ?? '', /checked with finn/);
  });
});

test('forget and erase a subject', async () => {
  const hugo = client('hugo');
  const keep = await hugo.remember(note('kept', 'diary'));
  const gone = await hugo.remember(note('forget me', 'diary'));
  assert.equal((await hugo.forget(gone.id, { reason: 'typo', erase: true }))[0], gone.id);
  assert.ok((await hugo.get(gone.id).catch((e) => e)) instanceof NotFoundError);
  assert.equal((await hugo.get(keep.id)).body, 'kept');

  const erin = client('erin');
  const ids = [(await erin.remember(note('entry 0', 'diary'))).id, (await erin.remember(note('entry 1', 'diary'))).id];
  const rc = await client('admin').eraseSubject('erin', { reason: 'request 42' });
  assert.equal(rc.subject, 'erin');
  assert.deepEqual((rc.erased ?? []).map((e) => e.id).sort(), [...ids].sort());
  for (const id of ids) assert.ok((await erin.get(id).catch((e) => e)) instanceof NotFoundError);
  assert.equal((await hugo.get(keep.id)).body, 'kept');
  assert.ok((await hugo.eraseSubject('finn').catch((e) => e)) instanceof ForbiddenError);
});

test('namespaces iterator', async () => {
  const gail = client('gail');
  for (const ns of ['work', 'work/notes', 'work/plans', 'workshop', 'home']) await gail.remember(note(`kept in ${ns}`, ns));
  const first = await gail.listNamespaces({ prefix: 'work', limit: 2 });
  assert.equal(first.items.length, 2);
  assert.ok(first.nextCursor);
  const under: string[] = [];
  for await (const ns of gail.namespaces({ prefix: 'work', pageSize: 2 })) under.push(ns);
  assert.deepEqual(under.sort(), ['work', 'work/notes', 'work/plans']);
  const every = new Set<string>();
  for await (const ns of gail.namespaces()) every.add(ns);
  assert.deepEqual(every, new Set(['work', 'work/notes', 'work/plans', 'workshop', 'home']));
  const listed = (await gail.list({ namespacePrefix: 'work' })).items.map((r) => r.namespace).sort();
  assert.deepEqual(listed, ['work', 'work/notes', 'work/plans']);
  const found = (await gail.search({ query: 'kept', namespacePrefix: 'work' })).map((r) => r.namespace).sort();
  assert.deepEqual(found, ['work', 'work/notes', 'work/plans']);
});

test('log key and status', async () => {
  const key = await withToken('').logKey('acme');
  assert.ok(key);
  const st = await client('admin').logStatus();
  assert.equal(st.verifier_key, key);
  assert.equal(key.split('+')[0], st.origin);
  assert.ok(st.origin.endsWith('/acme'));
  assert.ok(st.checkpoint.startsWith(st.origin + '\n'));
  assert.notEqual((await withToken('').logKey('beta')).split('+')[0], st.origin);
  assert.ok(st.size > 0);
  assert.equal(st.last_verify, null);
  assert.ok((await withToken('not-a-token').logStatus().catch((e) => e)) instanceof UnauthenticatedError);
});

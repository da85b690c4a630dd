// Every route of the API through the TypeScript client, against a real server.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';

import {
  ConflictError, CustodyClient, CustodyError, ForbiddenError, InvalidInputError, NotFoundError,
  SubjectNotAllowedError, UnauthenticatedError,
} from '../src/index.js';
import { Server } from './server.js';

const s = new Server();
const tok: Record<string, string> = {};
const client = (who: string, subject?: string) => new CustodyClient({ baseUrl: s.url, token: tok[who], subject });

before(async () => {
  tok.alice = s.principal('alice', '--role', 'user', '--channel', 'user');
  tok.bob = s.principal('bob', '--role', 'user', '--channel', 'user');
  tok.carol = s.principal('carol', '--role', 'user', '--channel', 'user');
  tok.harness = s.principal('harness', '--role', 'agent', '--channel', 'agent', '--channel', 'tool:email');
  tok.reviewer = s.principal('rita', '--role', 'reviewer');
  tok.owner = s.principal('olga', '--role', 'policy_owner');
  await s.start();
});
after(() => s.stop());

describe('memories', () => {
  test('search modes: each item names the lists that found it', async () => {
    const carol = client('carol');
    const d = await carol.remember({ namespace: 'prefs', class: 'preference', body: 'short answers please', channel: 'user' });
    const lexical = await carol.searchRanked({ query: 'short answers', mode: 'lexical' });
    assert.equal(lexical.mode, 'lexical');
    assert.equal(lexical.fallback, undefined);
    assert.deepEqual(lexical.items.map((r) => [r.id, r.lists]), [[d.id, ['lexical']]]);
    // The server has the built-in embedder: hybrid by default. The record's
    // vector may not be computed yet; its words match anyway.
    const hybrid = await carol.searchRanked({ query: 'short answers' });
    assert.equal(hybrid.mode, 'hybrid');
    assert.equal(hybrid.items[0].id, d.id);
    assert.ok(hybrid.items[0].lists?.includes('lexical'));
    await assert.rejects(carol.search({ query: 'short answers', mode: 'fuzzy' as 'lexical' }), InvalidInputError);
  });

  test('remember, get, list, search, history', async () => {
    const alice = client('alice');
    const d1 = await alice.remember({ namespace: 'prefs', key: 'tone', class: 'preference', body: 'short answers please', channel: 'user', source_ref: 'chat:1' });
    assert.equal(d1.state, 'admitted');
    assert.equal(d1.authority, 'user');
    const r = await alice.get(d1.id);
    assert.deepEqual([r.body, r.channel, r.writer, r.source_ref, r.class], ['short answers please', 'user', 'acme/alice', 'chat:1', 'preference']);
    assert.equal(r.log_index, d1.log_index);
    const d2 = await alice.remember({ namespace: 'prefs', key: 'tone', class: 'preference', body: 'long answers please', channel: 'user' });
    const page = await alice.list({ namespace: 'prefs', key: 'tone' });
    assert.deepEqual(page.items.map((x) => x.id), [d2.id]);
    // the history marks the version in force: the older one is superseded, its body withheld
    assert.deepEqual((await alice.history(d2.id)).map((h) => [h.version, h.body, h.state, h.superseded_by ?? null]),
      [[1, '', 'admitted', 2], [2, 'long answers please', 'admitted', null]]);
    // one limit rule on every surface: above the maximum is refused, never cut
    await assert.rejects(alice.search({ query: 'answers', limit: 101 }), (e: Error) => e instanceof InvalidInputError && /limit must be at most 100 \(got 101\)/.test(e.message));
    const found = await alice.search({ query: 'answers', namespace: 'prefs' });
    assert.equal(found[0].id, d2.id);
    assert.equal(typeof found[0].score, 'number');
    const hidden = await client('bob').get(d2.id).catch((e) => e);
    assert.ok(hidden instanceof NotFoundError);
    assert.deepEqual([hidden.status, hidden.code], [404, 'not_found']);
    const absent = await alice.get('01ABSENTABSENTABSENTABSENT').catch((e) => e);
    assert.ok(absent instanceof NotFoundError);
    assert.equal(absent.message, hidden.message);
    assert.deepEqual(await client('bob').search({ query: 'answers', namespace: 'prefs' }), []);
  });

  test('metadata and filters', async () => {
    const carol = client('carol');
    const d = await carol.remember({ namespace: 'proj', key: 'plan.apollo', class: 'fact', body: 'the apollo launch plan', channel: 'user',
      metadata: { project: 'apollo', channel: 'admin' } });
    await carol.remember({ namespace: 'proj', key: 'plan.gemini', class: 'fact', body: 'the gemini launch plan', channel: 'user', metadata: { project: 'gemini' } });
    await carol.remember({ namespace: 'proj', class: 'episode', body: 'a launch note', channel: 'user' });
    const r = await carol.get(d.id);
    assert.deepEqual(r.metadata, { project: 'apollo', channel: 'admin' });
    assert.equal(r.channel, 'user');
    assert.deepEqual((await carol.list({ namespace: 'proj', metadata: { project: 'apollo' } })).items.map((x) => x.id), [d.id]);
    assert.equal((await carol.list({ namespace: 'proj', keyPrefix: 'plan.' })).items.length, 2);
    assert.equal((await carol.list({ namespace: 'proj' })).items.length, 3);
    assert.deepEqual((await carol.search({ query: 'launch', metadata: { project: 'apollo' } })).map((x) => x.id), [d.id]);
    assert.equal((await carol.search({ query: 'launch', createdAfter: '2000-01-01T00:00:00Z' })).length, 3);
    assert.deepEqual(await carol.search({ query: 'launch', createdBefore: '2000-01-01T00:00:00Z' }), []);
    const bad = await carol.remember({ namespace: 'proj', class: 'fact', body: 'bad', channel: 'user', metadata: { 'Bad Key': 'x' } }).catch((e) => e);
    assert.ok(bad instanceof InvalidInputError);
    assert.match(bad.message, /metadata/);
  });

  test('pagination iterator', async () => {
    const bob = client('bob');
    const ids = new Set<string>();
    for (let i = 0; i < 7; i++) ids.add((await bob.remember({ namespace: 'notes', class: 'episode', body: `note ${i}`, channel: 'user' })).id);
    const first = await bob.list({ namespace: 'notes', limit: 3 });
    assert.equal(first.items.length, 3);
    assert.ok(first.nextCursor);
    const seen: string[] = [];
    for await (const r of bob.memories({ namespace: 'notes', pageSize: 3 })) seen.push(r.id);
    assert.equal(seen.length, new Set(seen).size);
    assert.deepEqual(new Set(seen), ids);
  });

  test('lineage and repair', async () => {
    const alice = client('alice');
    const p = await alice.remember({ namespace: 'trip', class: 'fact', body: 'flight on Monday', channel: 'user' });
    const c = await alice.remember({ namespace: 'trip', class: 'fact', body: 'summary: Monday flight', channel: 'user', derived_from: [{ id: p.id, weight: 1 }] });
    const lin = await alice.lineage(c.id);
    assert.deepEqual((lin.ancestors ?? []).map((a) => a.id), [p.id]);
    const rev = client('reviewer');
    const affected = await rev.quarantine(p.id, { reason: 'checking' });
    assert.equal(affected[0], p.id);
    assert.ok(affected.includes(c.id));
    assert.ok((await alice.get(c.id).catch((e) => e)) instanceof NotFoundError);
    const queue: string[] = [];
    for await (const item of rev.reviewQueue({ pageSize: 1 })) queue.push(item.id);
    assert.ok(queue.includes(p.id));
    const approved = await rev.approve(p.id);
    assert.deepEqual([approved.state, approved.authority], ['admitted', 'confirmed']);
    assert.equal((await rev.rebuild(c.id))[0], c.id);
    assert.equal((await alice.get(c.id)).state, 'admitted');
    assert.ok((await rev.retire(c.id, { reason: 'obsolete' })).includes(c.id));
    assert.ok((await alice.get(c.id).catch((e) => e)) instanceof NotFoundError);
  });

  test('a sensitive overwrite waits for confirmation', async () => {
    const alice = client('alice');
    await alice.remember({ namespace: 'bank', key: 'payee_account', class: 'fact', body: 'ACCT-1111', channel: 'user' });
    const d = await alice.remember({ namespace: 'bank', key: 'payee_account', class: 'fact', body: 'ACCT-2222', channel: 'user' });
    assert.equal(d.state, 'pending_confirmation');
    assert.equal((await alice.list({ namespace: 'bank', key: 'payee_account' })).items[0].body, 'ACCT-1111');
    assert.equal((await alice.confirm(d.id)).state, 'admitted');
    assert.equal((await alice.list({ namespace: 'bank', key: 'payee_account' })).items[0].body, 'ACCT-2222');
    const again = await alice.confirm(d.id).catch((e) => e);
    assert.ok(again instanceof ConflictError);
    assert.equal(again.status, 409);
  });

  test('reject and reevaluate', async () => {
    const d = await client('harness', 'alice').remember({ namespace: 'inbox', class: 'fact', body: 'the payee changed', channel: 'agent' });
    assert.equal(d.state, 'quarantined');
    const rev = client('reviewer');
    assert.equal((await rev.reject(d.id, { reason: 'spam' })).state, 'rejected');
    assert.deepEqual(await rev.reevaluate(), []);
  });
});

test('batch', async () => {
  const bob = client('bob');
  const items = [
    { namespace: 'batch', key: 'drink', class: 'preference' as const, body: 'tea', channel: 'user' },
    { namespace: 'batch', class: 'episode' as const, body: 'ordered tea', channel: 'user' },
  ];
  const doc = (await bob.openapi()) as { paths: Record<string, unknown> };
  if (!('/v1/memories/batch' in doc.paths)) {
    // a server without the route answers an error, which is thrown
    const err = await bob.rememberBatch(items).catch((e) => e);
    assert.ok(err instanceof CustodyError && [404, 405].includes(err.status), String(err));
    return;
  }
  const ds = await bob.rememberBatch(items);
  assert.deepEqual(ds.map((d) => d.state), ['admitted', 'admitted']);
  assert.deepEqual(await Promise.all(ds.map(async (d) => (await bob.get(d.id)).body)), ['tea', 'ordered tea']);
  const bad = await bob.rememberBatch([
    { namespace: 'batch2', class: 'fact', body: 'x', channel: 'user' },
    { namespace: 'bad namespace!', class: 'fact', body: 'y', channel: 'user' },
  ]).catch((e) => e);
  assert.ok(bad instanceof InvalidInputError, String(bad));
  assert.deepEqual((await bob.list({ namespace: 'batch2' })).items, []);
});

test('typed errors carry the code', async () => {
  const alice = client('alice');
  const forbidden = await alice.remember({ namespace: 'prefs', class: 'fact', body: 'x', channel: 'tool:web' }).catch((e) => e);
  assert.ok(forbidden instanceof ForbiddenError);
  assert.deepEqual([forbidden.status, forbidden.code], [403, 'forbidden']);
  const subject = await alice.list({ subject: 'bob' }).catch((e) => e);
  assert.ok(subject instanceof SubjectNotAllowedError && subject instanceof ForbiddenError);
  assert.equal(subject.code, 'subject_not_allowed');
  const invalid = await alice.remember({ namespace: 'bad namespace!', class: 'fact', body: 'x', channel: 'user' }).catch((e) => e);
  assert.ok(invalid instanceof InvalidInputError);
  assert.deepEqual([invalid.status, invalid.code, invalid.field], [400, 'invalid_input', 'namespace']);
  const unauth = await new CustodyClient({ baseUrl: s.url, token: 'cst_nope' }).list().catch((e) => e);
  assert.ok(unauth instanceof UnauthenticatedError);
  assert.equal(unauth.code, 'unauthenticated');
  const down = await new CustodyClient({ baseUrl: 'http://127.0.0.1:1', token: 'x' }).health().catch((e) => e);
  assert.ok(down instanceof CustodyError);
  assert.equal(down.code, 'unreachable');
  assert.deepEqual(await alice.health(), { status: 'ok' });
});

describe('log and policy', () => {
  test('log', async () => {
    const alice = client('alice');
    const d = await alice.remember({ namespace: 'log', class: 'episode', body: 'logged', channel: 'user' });
    const size = Number((await alice.checkpoint()).split('\n')[1]);
    assert.ok(size > d.log_index);
    const [e] = await alice.logEntries(d.log_index, d.log_index + 1);
    assert.equal(e.index, d.log_index);
    const leaf = Buffer.from(e.leaf!, 'base64');
    assert.equal(createHash('sha256').update(Buffer.concat([Buffer.from([0]), leaf])).digest('base64'), e.leaf_hash);
    const [redacted] = await client('bob').logEntries(d.log_index, d.log_index + 1);
    assert.deepEqual(Object.keys(redacted).sort(), ['index', 'leaf_hash']);
    const proof = await alice.inclusionProof(d.log_index, size);
    assert.deepEqual([proof.index, proof.size], [d.log_index, size]);
    assert.ok(Array.isArray(proof.hashes));
    const cons = await alice.consistencyProof(1, size);
    assert.deepEqual([cons.from, cons.to], [1, size]);
    const all: number[] = [];
    for await (const x of alice.allLogEntries(0, size, { pageSize: 2 })) all.push(x.index);
    assert.deepEqual(all, [...Array(size).keys()]);
  });

  test('policy', async () => {
    const owner = client('owner');
    const pol = await owner.getPolicy();
    assert.equal(pol.version.length, 64);
    assert.ok((await client('alice').putPolicy(pol.text).catch((e) => e)) instanceof ForbiddenError);
    assert.ok((await owner.putPolicy('this is not cedar').catch((e) => e)) instanceof InvalidInputError);
    const changed = await owner.putPolicy(pol.text + '\n// reviewed\n');
    assert.notEqual(changed.version, pol.version);
    assert.equal((await owner.getPolicy()).version, changed.version);
  });
});

// The differences from InMemoryStore that CustodyStore once had, each
// pinned by the same calls on both stores: what they answer must be the
// same (times and provenance compared by compare.ts's rule).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { InMemoryStore, InvalidNamespaceError } from '@langchain/langgraph-checkpoint';
import { CustodyClient } from '@custody/client';
import { CustodyStore } from '../src/index.js';
import { answer, Times, type Call } from './compare.js';
import { Server } from './server.js';

const s = new Server();
let client: CustodyClient;
let n = 0;

before(async () => {
  const token = s.principal('alice', '--role', 'user', '--channel', 'user');
  await s.start();
  client = new CustodyClient({ baseUrl: s.url, token });
});
after(() => s.stop());

/** Runs calls on both stores and returns both answers of the last one, after checking every answer matches. */
async function same(calls: Call[]): Promise<unknown> {
  const [ours, theirs] = [new CustodyStore({ client, channel: 'user', root: `pin${n++}` }), new InMemoryStore()];
  const [t1, t2] = [new Times(), new Times()];
  let last: unknown;
  for (const c of calls) {
    const [a, b] = [await answer(ours, c), await answer(theirs, c)];
    const norm = (x: typeof a, t: Times) => ('ok' in x ? { ok: t.check(x.ok, JSON.stringify(c)) } : x);
    assert.deepStrictEqual(norm(a, t1), norm(b, t2), JSON.stringify(c));
    last = 'ok' in a ? a.ok : a.error;
  }
  return last;
}

const ns = ['users', 'u1', 'prefs'];

test('$in and $nin filter as InMemoryStore does', async () => {
  const got = await same([
    { op: 'put', namespace: ns, key: 'a', value: { level: 1, tag: 'x' } },
    { op: 'put', namespace: ns, key: 'b', value: { level: 2, tag: 'y' } },
    { op: 'search', prefix: ['users'], filter: { level: { $in: [2, 3] } } },
    { op: 'search', prefix: ['users'], filter: { tag: { $nin: ['y'] } } },
  ]);
  assert.deepEqual((got as { key: string }[]).map((i) => i.key), ['a']);
});

test('an array in an equality filter never matches, as in InMemoryStore', async () => {
  const got = await same([
    { op: 'put', namespace: ns, key: 'a', value: { tags: ['x', 'y'] } },
    { op: 'search', prefix: [], filter: { tags: ['x', 'y'] } },
  ]);
  assert.deepEqual(got, []);
});

test('an update keeps createdAt', async () => {
  const store = new CustodyStore({ client, channel: 'user', root: `pin${n++}` });
  await store.put(ns, 'a', { v: 1 });
  const first = await store.get(ns, 'a');
  await store.put(ns, 'a', { v: 2 });
  const second = await store.get(ns, 'a');
  assert.equal(second?.value.v, 2);
  assert.equal(second?.createdAt.getTime(), first?.createdAt.getTime());
  assert.ok(second!.updatedAt.getTime() >= first!.updatedAt.getTime());
  await same([{ op: 'put', namespace: ns, key: 'a', value: { v: 1 } }, { op: 'put', namespace: ns, key: 'a', value: { v: 2 } }, { op: 'get', namespace: ns, key: 'a' }]);
});

test('a string, a value with its own _provenance, and a Date come back as they were put', async () => {
  assert.deepEqual(((await same([{ op: 'put', namespace: ns, key: 's', value: 'hello' }, { op: 'get', namespace: ns, key: 's' }])) as { value: unknown }).value, 'hello');
  const own = { _provenance: 'mine', text: 'x' };
  assert.deepEqual(((await same([{ op: 'put', namespace: ns, key: 'p', value: own }, { op: 'get', namespace: ns, key: 'p' }])) as { value: unknown }).value, own);
  const at = new Date('2026-03-04T05:06:07.089Z');
  const dated = { when: at, nested: [{ at }], looksLikeATag: { $date: 'not a date' } };
  const got = (await same([{ op: 'put', namespace: ns, key: 'd', value: dated }, { op: 'get', namespace: ns, key: 'd' }])) as { value: typeof dated };
  assert.ok(got.value.when instanceof Date);
  assert.deepEqual(got.value, dated);
});

test('a namespace stays when its last item is deleted, and a delete names one', async () => {
  const got = await same([
    { op: 'put', namespace: ['teams', 't1'], key: 'motto', value: { text: 'ship it' } },
    { op: 'delete', namespace: ['teams', 't1'], key: 'motto' },
    { op: 'delete', namespace: ['never', 'written'], key: 'nothing' },
    { op: 'list' },
  ]);
  assert.deepEqual(got, [['never', 'written'], ['teams', 't1']]);
});

test('a batch reads the store as it was, answers null for its puts, and checks every namespace first', async () => {
  // a get in the same batch as the put that creates an item finds nothing, on both
  const got = await same([
    { op: 'batch', ops: [{ namespace: ns, key: 'k', value: { v: 'new' } }, { namespace: ns, key: 'k' }] },
  ]);
  assert.deepEqual(got, [null, null]);
  // of an item that exists, CustodyStore's get answers the value before the batch (InMemoryStore's answer
  // is its own item object, which the batch's put then changes: a difference the doc lists)
  const store = new CustodyStore({ client, channel: 'user', root: `pin${n++}` });
  await store.put(ns, 'k', { v: 'old' });
  const [put1, read, put2] = await store.batch([{ namespace: ns, key: 'k', value: { v: 'new' } }, { namespace: ns, key: 'k' }, { namespace: ns, key: 'k', value: { v: 'newer' } }]);
  assert.equal(put1, null);
  assert.equal(put2, null);
  assert.equal(read?.value.v, 'old');
  assert.equal((await store.get(ns, 'k'))?.value.v, 'newer', 'the last put of an item wins');

  await assert.rejects(store.batch([{ namespace: ns, key: 'k2', value: { v: 1 } }, { namespace: ['bad.label'], key: 'k', value: { v: 2 } }]), InvalidNamespaceError);
  assert.equal(await store.get(ns, 'k2'), null, 'nothing of a refused batch is written');
  await same([{ op: 'batch', ops: [{ namespace: ['bad.label'], key: 'k', value: { v: 2 } }] }, { op: 'list' }]);
});

// Drop-in by definition: fast-check generates sequences of BaseStore calls
// (put, delete, get, search, listNamespaces, and batches of them) and runs
// each on CustodyStore, against a real custody server, and on LangGraph's
// InMemoryStore; every answer must be the same, but for what
// docs/clients/langgraph.md lists as differences (provenance, the times'
// own values, query ranking). A query search is checked by its own
// property: it returns the store's items that hold the query word, as
// InMemoryStore has them.
//
//   FC_RUNS=500 npm test    # a longer campaign (default 30 runs of each property)

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';

import { InMemoryStore, type Operation } from '@langchain/langgraph-checkpoint';
import { CustodyClient } from '@custody/client';
import { CustodyStore } from '../src/index.js';
import { answer, deletions, Times, type Call } from './compare.js';
import { Server } from './server.js';

const RUNS = Number(process.env.FC_RUNS ?? 30);
const s = new Server();
let client: CustodyClient;
let stores = 0;

before(async () => {
  const token = s.principal('alice', '--role', 'user', '--channel', 'user');
  await s.start();
  client = new CustodyClient({ baseUrl: s.url, token });
});
after(() => s.stop());

/** A store of its own for each run: a fresh root on the same server. */
function custodyStore(): CustodyStore {
  return new CustodyStore({ client, channel: 'user', root: `diff${stores++}` });
}

// Words of values, never field names nor each other's stems, so that a
// query for one finds exactly the values that hold it.
const WORDS = ['apple', 'river', 'violin', 'quartz', 'meadow', 'lantern'];
const FIELDS = ['a', 'b', 'n', 'tags', 'nested', '_provenance', '$date', 'x y'];
const LABELS = ['users', 'u1', 'u 2', 'prefs', 'docs', 'Ünïcode', 'langgraph', '_hidden'];
const KEYS = ['k1', 'k2', 'tone', 'odd key / with spaces', '_h123', 'ключ'];

const word = fc.constantFrom(...WORDS);
const label = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...LABELS) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }).filter((l) => !/[.:\0]/.test(l)) });
const namespace = fc.array(label, { minLength: 1, maxLength: 3 });
const key = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...KEYS) }, { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) });
// Strings with no character JSON escapes as \n or \uXXXX (see the doc's differences).
const text = fc.string({ unit: 'grapheme', maxLength: 12 }).filter((t) => !/[\u0000-\u001f]/.test(t));
const scalar = fc.oneof(word, fc.integer({ min: -5, max: 5 }), fc.boolean(), fc.constant(null), fc.double({ noNaN: true, noDefaultInfinity: true, min: -10, max: 10 }).filter((d) => !Object.is(d, -0)),
  text, fc.date({ noInvalidDate: true }));
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom(...FIELDS), tie('v'), { maxKeys: 3, noNullPrototype: true })),
})).v;
// Mostly objects, as items are, sometimes a bare string, number or array.
const value = fc.oneof({ weight: 5, arbitrary: fc.dictionary(fc.constantFrom(...FIELDS), json, { maxKeys: 4, noNullPrototype: true }) }, { weight: 1, arbitrary: json.filter((v) => v !== null) });
const operand = fc.oneof(word, fc.integer({ min: -5, max: 5 }), fc.boolean());
const condition = fc.oneof(operand, fc.array(operand, { maxLength: 2 }),
  fc.record({ $eq: operand }), fc.record({ $ne: operand }), fc.record({ $gt: fc.integer({ min: -5, max: 5 }) }),
  fc.record({ $gte: fc.integer({ min: -5, max: 5 }), $lt: fc.integer({ min: -5, max: 5 }) }, { requiredKeys: [] }),
  fc.record({ $lte: fc.integer({ min: -5, max: 5 }) }), fc.record({ $in: fc.array(operand, { maxLength: 3 }) }), fc.record({ $nin: fc.array(operand, { maxLength: 3 }) }));
const filter = fc.option(fc.dictionary(fc.constantFrom(...FIELDS), condition, { maxKeys: 2, noNullPrototype: true }), { nil: undefined });
const prefix = fc.array(fc.constantFrom(...LABELS), { maxLength: 2 });
const small = fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined });

const put = fc.record({ op: fc.constant('put' as const), namespace, key, value });
const del = fc.record({ op: fc.constant('delete' as const), namespace, key });
const get = fc.record({ op: fc.constant('get' as const), namespace, key });
const search = fc.record({ op: fc.constant('search' as const), prefix, filter, limit: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }), offset: small });
const list = fc.record({
  op: fc.constant('list' as const), prefix: fc.option(fc.array(fc.constantFrom(...LABELS, '*'), { maxLength: 2 }), { nil: undefined }),
  suffix: fc.option(fc.array(fc.constantFrom(...LABELS, '*'), { maxLength: 1 }), { nil: undefined }), maxDepth: small, limit: small, offset: small,
});
const badNamespace: fc.Arbitrary<string[]> = fc.constantFrom<string[]>(['bad.label'], ['a:b'], [], ['ok', ''], ['nul\0']);
const batchOp: fc.Arbitrary<Operation> = fc.oneof(
  put.map(({ namespace, key, value }) => ({ namespace, key, value }) as Operation),
  del.map(({ namespace, key }) => ({ namespace, key, value: null }) as Operation),
  get.map(({ namespace, key }) => ({ namespace, key }) as Operation),
  search.map(({ prefix, filter, limit, offset }) => ({ namespacePrefix: prefix, filter, limit: limit ?? 10, offset: offset ?? 0 }) as Operation),
  // as listNamespaces makes it: InMemoryStore answers nothing for one without the matchConditions property
  fc.constant({ matchConditions: undefined, limit: 100, offset: 0 } as Operation),
  fc.record({ namespace: badNamespace, key }).map(({ namespace, key }) => ({ namespace, key }) as unknown as Operation),
);
// InMemoryStore's get answers its own item object, which a later put of the same batch changes (a
// difference the doc lists): such batches are left out.
const aliased = (ops: Operation[]) => ops.some((g) => !('value' in g) && 'key' in g &&
  ops.some((p) => 'value' in p && p.value !== null && p.key === g.key && JSON.stringify(p.namespace) === JSON.stringify(g.namespace)));
const batch = fc.record({ op: fc.constant('batch' as const), ops: fc.array(batchOp, { minLength: 1, maxLength: 4 }).filter((ops) => !aliased(ops)) });
const bad = fc.oneof(fc.record({ op: fc.constant('put' as const), namespace: fc.oneof(badNamespace, fc.constant<string[]>(['langgraph', 'x'])), key, value }),
  fc.record({ op: fc.constant('get' as const), namespace: badNamespace, key }));
const call: fc.Arbitrary<Call> = fc.oneof({ weight: 6, arbitrary: put }, { weight: 2, arbitrary: del }, { weight: 3, arbitrary: get },
  { weight: 3, arbitrary: search }, { weight: 2, arbitrary: list }, { weight: 2, arbitrary: batch }, { weight: 1, arbitrary: bad });

test('every call answers as InMemoryStore does', async () => {
  await fc.assert(fc.asyncProperty(fc.array(call, { minLength: 1, maxLength: 25 }), async (calls) => {
    const [ours, theirs] = [custodyStore(), new InMemoryStore()];
    const [ourTimes, theirTimes] = [new Times(), new Times()];
    for (const [i, c] of calls.entries()) {
      const where = `call ${i} ${JSON.stringify(c)}`;
      const [a, b] = [await answer(ours, c), await answer(theirs, c)];
      const norm = (x: typeof a, t: Times) => ('ok' in x ? { ok: t.check(x.ok, where) } : x);
      assert.deepStrictEqual(norm(a, ourTimes), norm(b, theirTimes), where);
      for (const [ns, k] of 'ok' in a ? deletions(c) : []) {
        ourTimes.forget(ns, k);
        theirTimes.forget(ns, k);
      }
    }
  }), { numRuns: RUNS });
});

// Whether a value holds a word as one of its texts' words.
function holds(v: unknown, w: string): boolean {
  if (typeof v === 'string') return v.toLowerCase().split(/[^\p{L}\p{N}]+/u).includes(w);
  if (Array.isArray(v)) return v.some((x) => holds(x, w));
  if (v && typeof v === 'object' && !(v instanceof Date)) return Object.values(v).some((x) => holds(x, w));
  return false;
}

test('a query search returns the items that hold the query word', async () => {
  const puts = fc.array(fc.record({ namespace: namespace.filter((ns) => ns[0] !== 'langgraph'), key, value }), { minLength: 1, maxLength: 15 });
  await fc.assert(fc.asyncProperty(puts, word, prefix, filter, async (items, q, pre, f) => {
    const [ours, theirs] = [custodyStore(), new InMemoryStore()];
    for (const it of items) {
      await ours.put(it.namespace, it.key, it.value as Record<string, unknown>);
      await theirs.put(it.namespace, it.key, it.value as Record<string, unknown>);
    }
    const strip = (x: { namespace: string[]; key: string; value: unknown }) => ({ namespace: x.namespace, key: x.key, value: x.value });
    // InMemoryStore without an index ignores the query: its answer is every candidate.
    const want = (await theirs.search(pre, { filter: f, limit: 100 })).filter((x) => holds(x.value, q)).map(strip);
    const got = (await ours.search(pre, { query: q, filter: f, limit: 100 })).map(strip);
    const order = (xs: ReturnType<typeof strip>[]) => [...xs].sort((x, y) => JSON.stringify([x.namespace, x.key]).localeCompare(JSON.stringify([y.namespace, y.key])));
    assert.deepStrictEqual(order(got), order(want), `query ${q} under ${JSON.stringify(pre)} filter ${JSON.stringify(f)}`);
  }), { numRuns: RUNS });
});

// A real LangGraph.js graph on CustodyStore, against a real custody server:
// it remembers on one thread and recalls on another; a put on an outside
// channel is held by admission and never recalled; and the store's
// operations behave as BaseStore's.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { Annotation, END, MemorySaver, START, StateGraph, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { CustodyClient, type Decision } from '@custody/client';
import { CustodyStore, HeldWriteError, type CustodyItem } from '../src/index.js';
import { Server } from './server.js';

const s = new Server();
let alice = '';
let harness = '';

before(async () => {
  alice = s.principal('alice', '--role', 'user', '--channel', 'user');
  harness = s.principal('harness', '--role', 'agent', '--channel', 'agent', '--channel', 'tool:web');
  await s.start();
});
after(() => s.stop());

const State = Annotation.Root({
  user: Annotation<string>,
  input: Annotation<string>,
  answer: Annotation<string>,
});

// The graph: "remember X" stores X for the user; anything else recalls
// what the store finds for it.
function buildGraph(store: CustodyStore) {
  return new StateGraph(State)
    .addNode('memory', async (state: typeof State.State, config: LangGraphRunnableConfig) => {
      const ns = ['memories', state.user];
      const m = /^remember (.+)$/.exec(state.input);
      if (m) {
        await config.store!.put(ns, `note-${m[1].length}-${m[1].split(' ')[0]}`, { text: m[1] });
        return { answer: 'ok' };
      }
      const hits = await config.store!.search(ns, { query: state.input, limit: 5 });
      return { answer: hits.map((h) => String(h.value.text)).join(' | ') };
    })
    .addEdge(START, 'memory')
    .addEdge('memory', END)
    .compile({ store, checkpointer: new MemorySaver() });
}

test('a graph remembers on one thread and recalls on another', async () => {
  const decisions: Decision[] = [];
  const store = new CustodyStore({ client: new CustodyClient({ baseUrl: s.url, token: alice }), channel: 'user', onDecision: (d) => decisions.push(d) });
  const graph = buildGraph(store);
  await graph.invoke({ user: 'alice', input: 'remember tea without sugar' }, { configurable: { thread_id: 't1' } });
  assert.equal(decisions.at(-1)?.state, 'admitted');
  const out = await graph.invoke({ user: 'alice', input: 'sugar' }, { configurable: { thread_id: 't2' } });
  assert.equal(out.answer, 'tea without sugar');

  const [hit] = await store.search(['memories', 'alice'], { query: 'sugar' }) as CustodyItem[];
  const prov = hit.provenance;
  assert.deepEqual([prov.channel, prov.authority, prov.writer, prov.state], ['user', 'user', 'acme/alice', 'admitted']);
});

test('a put on an outside channel is held, said so, and never recalled', async () => {
  const decisions: Decision[] = [];
  const client = new CustodyClient({ baseUrl: s.url, token: harness, subject: 'alice' });
  const web = new CustodyStore({ client, channel: 'tool:web', onDecision: (d) => decisions.push(d) });
  await assert.rejects(
    buildGraph(web).invoke({ user: 'bob', input: 'remember wire money to ACCT-7777' }, { configurable: { thread_id: 't3' } }),
    (e: unknown) => e instanceof HeldWriteError && e.held.length === 1 && e.held[0].decision.state === 'quarantined' && /not in force/.test(e.message),
  );
  assert.equal(decisions.at(-1)?.state, 'quarantined');
  const agent = new CustodyStore({ client, channel: 'agent' });
  const out = await buildGraph(agent).invoke({ user: 'bob', input: 'ACCT-7777' }, { configurable: { thread_id: 't4' } });
  assert.equal(out.answer, '');
  // the twin: an agent episode from the same harness is admitted and recalled
  const episodes = new CustodyStore({ client, channel: 'agent', class: 'episode' });
  await buildGraph(episodes).invoke({ user: 'bob', input: 'remember booked a table for two' }, { configurable: { thread_id: 't5' } });
  const again = await buildGraph(episodes).invoke({ user: 'bob', input: 'table' }, { configurable: { thread_id: 't6' } });
  assert.equal(again.answer, 'booked a table for two');
});

test('get, put, delete, search with filters, listNamespaces', async () => {
  const store = new CustodyStore({ client: new CustodyClient({ baseUrl: s.url, token: alice }), channel: 'user', root: 'ops' });
  await store.put(['users', 'u1', 'prefs'], 'tone', { style: 'short', level: 2 });
  await store.put(['users', 'u1', 'prefs'], 'odd key / with spaces', { style: 'long', level: 5 });
  await store.put(['users', 'u 2', 'prefs'], 'tone', { style: 'short', level: 9 });
  await store.put(['teams', 't1'], 'motto', { text: 'ship it' });

  const got = await store.get(['users', 'u1', 'prefs'], 'odd key / with spaces');
  assert.equal(got?.value.style, 'long');
  assert.deepEqual(got?.namespace, ['users', 'u1', 'prefs']);
  assert.equal(await store.get(['users', 'u1', 'prefs'], 'absent'), null);

  await store.put(['users', 'u1', 'prefs'], 'tone', { style: 'terse', level: 3 });
  assert.equal((await store.get(['users', 'u1', 'prefs'], 'tone'))?.value.style, 'terse');

  const users = await store.search(['users'], { limit: 10 });
  assert.equal(users.length, 3);
  const short = await store.search(['users'], { filter: { level: { $gte: 5 } } });
  assert.deepEqual(short.map((i) => i.value.level).sort(), [5, 9]);
  assert.deepEqual((await store.search(['users'], { filter: { style: 'short' } })).map((i) => i.namespace[1]), ['u 2']);

  assert.deepEqual(await store.listNamespaces({}), [['teams', 't1'], ['users', 'u 2', 'prefs'], ['users', 'u1', 'prefs']]);
  assert.deepEqual(await store.listNamespaces({ prefix: ['users'], maxDepth: 2 }), [['users', 'u 2'], ['users', 'u1']]);
  assert.deepEqual(await store.listNamespaces({ suffix: ['prefs'] }), [['users', 'u 2', 'prefs'], ['users', 'u1', 'prefs']]);

  await store.delete(['teams', 't1'], 'motto');
  assert.equal(await store.get(['teams', 't1'], 'motto'), null);
  // as in InMemoryStore, a namespace stays once it was written to
  assert.deepEqual(await store.listNamespaces({ prefix: ['teams'] }), [['teams', 't1']]);
  assert.deepEqual(await store.search(['teams']), []);
});

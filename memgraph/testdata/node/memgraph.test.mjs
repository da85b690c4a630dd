// custody mcp --memory-graph against the reference MCP memory server
// (@modelcontextprotocol/server-memory, pinned): the same tools, schemas and
// resource; the same answer to every call of generated sequences of the
// nine tools (fast-check), valid arguments or not; a deletion custody holds
// never answered as done; two processes writing at once losing nothing.
//
//   CUSTODY_BIN=/path/to/custody node --test
//   FC_RUNS=200 CUSTODY_BIN=... node --test    # a longer campaign (default 25 runs)

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import fc from 'fast-check';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const BIN = process.env.CUSTODY_BIN;
if (!BIN) {
  throw new Error('set CUSTODY_BIN to a built custody binary (go build -o custody ./cmd/custody)');
}
const RUNS = Number(process.env.FC_RUNS ?? 25);
const require = createRequire(import.meta.url);
const REFERENCE = join(dirname(require.resolve('@modelcontextprotocol/server-memory/package.json')), 'dist', 'index.js');

const dirs = [];
const clients = [];

after(async () => {
  for (const c of clients) await c.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function connect(name, command, args, env, capabilities = {}) {
  const client = new Client({ name, version: '1.0.0' }, { capabilities });
  await client.connect(new StdioClientTransport({ command, args, env: { ...process.env, ...env }, stderr: 'pipe' }));
  clients.push(client);
  return client;
}

/** A fresh store with a user alice; custody(name) connects custody mcp --memory-graph on it. */
function store() {
  const dir = mkdtempSync(join(tmpdir(), 'custody-memgraph-'));
  dirs.push(dir);
  const db = join(dir, 'custody.db');
  const token = execFileSync(BIN, ['principal', 'add', '--db', db, '--tenant', 'acme', '--name', 'alice', '--role', 'user', '--channel', 'user', '--channel', 'agent'],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  assert.match(token, /^cst_/);
  return {
    custody: (name, capabilities) => connect(name, BIN, ['mcp', '--memory-graph', '--db', db, '--token', token], {}, capabilities),
    reference: () => connect('reference', process.execPath, [REFERENCE], { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') }),
  };
}

// What a call answers, error or not (a protocol error counts as an answer too).
async function answer(client, name, args) {
  try {
    const r = await client.callTool({ name, arguments: args });
    return { content: r.content, structuredContent: r.structuredContent, isError: r.isError ?? false };
  } catch (e) {
    return { thrown: `${e.code} ${e.message}` };
  }
}

async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  const text = res.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  assert.ok(!res.isError, `${name} failed: ${text}`);
  return res.structuredContent;
}

test('the same tools, schemas and resource', async () => {
  const s = store();
  const [ref, cus] = [await s.reference(), await s.custody('schemas')];
  // the Go MCP SDK has no place for a tool's "execution" (the reference's is taskSupport: forbidden),
  // and lists tools in name order (the reference in the order it made them)
  const tools = async (c) => (await c.listTools()).tools.map(({ execution: _, ...t }) => t).sort((x, y) => x.name.localeCompare(y.name));
  assert.deepEqual(await tools(cus), await tools(ref));
  assert.deepEqual((await cus.listResources()).resources, (await ref.listResources()).resources);
  assert.deepEqual(cus.getServerCapabilities().resources, ref.getServerCapabilities().resources);
  const args = { entities: [{ name: 'Alice', entityType: 'person', observations: ['likes tea'] }] };
  await call(ref, 'create_entities', args);
  await call(cus, 'create_entities', args);
  const read = (c) => c.readResource({ uri: 'memory://knowledge-graph' });
  const [rc, rr] = [await read(cus), await read(ref)];
  assert.deepEqual(rc.contents, rr.contents);
});

test('the same answers to a fixed sequence, repetitions, extra arguments and bad input included', async () => {
  const s = store();
  const [ref, cus] = [await s.reference(), await s.custody('sequence')];
  const steps = [
    ['create_entities', { entities: [
      { name: 'Alice', entityType: 'person', observations: ['lives in Lyon', 'likes tea', 'likes tea'] },
      { name: 'Bob', entityType: 'person', observations: [] },
      { name: 'Acme', entityType: 'company', observations: ['makes anvils'], extra: 'ignored' },
      { name: 'Bob', entityType: 'robot', observations: ['a second Bob'] },
    ], unknown: 1 }],
    ['create_entities', { entities: [{ name: 'Alice', entityType: 'robot', observations: ['ignored'] }, { name: 'Lyon', entityType: 'city', observations: ['in France'] }] }],
    ['create_relations', { relations: [
      { from: 'Alice', to: 'Acme', relationType: 'works_at' },
      { from: 'Bob', to: 'Acme', relationType: 'works_at' },
      { from: 'Alice', to: 'Lyon', relationType: 'lives_in' },
      { from: 'Alice', to: 'Bob', relationType: 'knows' },
      { from: 'Alice', to: 'Bob', relationType: 'knows' },
    ] }],
    ['create_relations', { relations: [{ from: 'Alice', to: 'Acme', relationType: 'works_at' }] }],
    ['add_observations', { observations: [{ entityName: 'Alice', contents: ['likes tea', 'plays chess', 'plays chess'] }, { entityName: 'Bob', contents: ['drives a van'] }, { entityName: 'Alice', contents: ['plays chess', 'sings'] }] }],
    ['search_nodes', { query: 'TEA' }],
    ['search_nodes', { query: 'anvil' }],
    ['open_nodes', { names: ['Bob', 'Nobody'] }],
    ['delete_observations', { deletions: [{ entityName: 'Alice', observations: ['lives in Lyon', 'not there', 'likes tea'] }, { entityName: 'Nobody', observations: ['x'] }] }],
    ['delete_relations', { relations: [{ from: 'Alice', to: 'Bob', relationType: 'knows' }, { from: 'X', to: 'Y', relationType: 'z' }] }],
    ['read_graph', { stray: true }],
    ['delete_entities', { entityNames: ['Acme', 'Nobody'] }],
    ['create_entities', { entities: [{ name: 'Acme', entityType: 'company', observations: ['reopened'] }] }],
    ['add_observations', { observations: [{ entityName: 'Acme', contents: ['makes anvils'] }] }],
    ['add_observations', { observations: [{ entityName: 'Bob', contents: ['half'] }, { entityName: 'Ghost', contents: ['boo'] }] }],
    ['open_nodes', { names: ['Alice', 'Acme', 'Bob'] }],
    ['create_entities', { entities: [{ name: 1 }] }],
    ['create_entities', { entities: 'x' }],
    ['create_entities', {}],
    ['add_observations', { observations: [{ entityName: 'Bob', contents: ['ok', 2, null] }, 'nope'] }],
    ['delete_entities', { entityNames: null }],
    ['search_nodes', { query: ['tea'] }],
    ['no_such_tool', {}],
    ['read_graph', {}],
  ];
  for (const [name, args] of steps) {
    assert.deepEqual(await answer(cus, name, args), await answer(ref, name, args), `${name} ${JSON.stringify(args)}`);
  }
});

// The generated calls: names, types and contents from small sets, so that
// calls meet each other's entities; now and then a bad argument. No name is
// a sensitive key (payee, account, ...): deleting one waits for the owner
// in custody, a difference the last test covers.
const NAMES = ['Alice', 'Bob', 'acme', 'Lyon', 'Ünï <&>', 'tea\u2028time'];
const name = fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...NAMES) }, { weight: 1, arbitrary: fc.string({ maxLength: 6 }) });
const text = fc.oneof({ weight: 4, arbitrary: fc.constantFrom('likes tea', 'TEA', 'chess', 'lives in Lyon', '') }, { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) });
const type = fc.constantFrom('person', 'city', 'company');
const junk = fc.oneof(fc.integer(), fc.constant(null), fc.boolean(), fc.constant({}));
const entity = fc.record({ name, entityType: type, observations: fc.array(text, { maxLength: 3 }) });
const relation = fc.record({ from: name, to: name, relationType: fc.constantFrom('knows', 'works_at', 'in') });
const toolCall = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(fc.constant('create_entities'), fc.record({ entities: fc.array(entity, { maxLength: 3 }) })) },
  { weight: 3, arbitrary: fc.tuple(fc.constant('create_relations'), fc.record({ relations: fc.array(relation, { maxLength: 3 }) })) },
  { weight: 3, arbitrary: fc.tuple(fc.constant('add_observations'), fc.record({ observations: fc.array(fc.record({ entityName: name, contents: fc.array(text, { maxLength: 3 }) }), { maxLength: 2 }) })) },
  { weight: 2, arbitrary: fc.tuple(fc.constant('delete_entities'), fc.record({ entityNames: fc.array(name, { maxLength: 2 }) })) },
  { weight: 2, arbitrary: fc.tuple(fc.constant('delete_observations'), fc.record({ deletions: fc.array(fc.record({ entityName: name, observations: fc.array(text, { maxLength: 2 }) }), { maxLength: 2 }) })) },
  { weight: 2, arbitrary: fc.tuple(fc.constant('delete_relations'), fc.record({ relations: fc.array(relation, { maxLength: 2 }) })) },
  { weight: 2, arbitrary: fc.tuple(fc.constant('read_graph'), fc.constant({})) },
  { weight: 2, arbitrary: fc.tuple(fc.constant('search_nodes'), fc.record({ query: text })) },
  { weight: 2, arbitrary: fc.tuple(fc.constant('open_nodes'), fc.record({ names: fc.array(name, { maxLength: 3 }) })) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('create_entities', 'add_observations', 'delete_relations', 'open_nodes', 'search_nodes'),
    fc.dictionary(fc.constantFrom('entities', 'observations', 'relations', 'names', 'query', 'extra'), fc.oneof(junk, fc.array(fc.oneof(junk, entity), { maxLength: 2 })), { maxKeys: 2, noNullPrototype: true })) },
);

test('every generated sequence of calls answers as the reference does', async () => {
  await fc.assert(fc.asyncProperty(fc.array(toolCall, { minLength: 1, maxLength: 12 }), async (calls) => {
    const s = store();
    const [ref, cus] = [await s.reference(), await s.custody('fc')];
    try {
      for (const [i, [name, args]] of calls.entries()) {
        assert.deepEqual(await answer(cus, name, args), await answer(ref, name, args), `call ${i}: ${name} ${JSON.stringify(args)}`);
      }
      assert.deepEqual(await answer(cus, 'read_graph', {}), await answer(ref, 'read_graph', {}), 'the graphs at the end');
    } finally {
      await Promise.all([ref.close(), cus.close()]);
    }
  }), { numRuns: RUNS });
});

test('a subscriber hears of each change, as from the reference', async () => {
  const s = store();
  const heard = async (client) => {
    let n = 0;
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, () => { n++; });
    await client.subscribeResource({ uri: 'memory://knowledge-graph' });
    await call(client, 'create_entities', { entities: [{ name: 'A', entityType: 't', observations: [] }] });
    await call(client, 'read_graph', {});
    await call(client, 'delete_entities', { entityNames: ['A'] });
    await client.ping(); // the notices sent before the answer to this have arrived
    return n;
  };
  assert.equal(await heard(await s.custody('subscriber')), await heard(await s.reference()));
});

test('a deletion custody holds is never answered as done; the owner confirms it by answering the client', async () => {
  const s = store();
  const plain = await s.custody('no-elicitation');
  await call(plain, 'create_entities', { entities: [{ name: 'payee account', entityType: 'account', observations: ['ACCT-1042'] }, { name: 'Tea', entityType: 'drink', observations: [] }] });
  const res = await plain.callTool({ name: 'delete_entities', arguments: { entityNames: ['payee account', 'Tea'] } });
  assert.equal(res.structuredContent.success, false);
  assert.match(res.structuredContent.message, /Not deleted: custody holds 2 of these deletions/);
  assert.match(res.structuredContent.message, /payee account/);
  assert.match(res.structuredContent.message, /console#mine/);
  // the twin: a plain name is deleted, and said so
  assert.deepEqual((await call(plain, 'read_graph', {})).entities.map((e) => e.name), ['payee account']);
  await call(plain, 'create_entities', { entities: [{ name: 'Coffee', entityType: 'drink', observations: [] }] });
  assert.deepEqual(await call(plain, 'delete_entities', { entityNames: ['Coffee'] }), { success: true, message: 'Entities deleted successfully' });

  // A client that can ask its user: the owner says no, then yes.
  let reply = { action: 'decline' };
  const asked = [];
  const owner = await s.custody('elicitation', { elicitation: {} });
  owner.setRequestHandler(ElicitRequestSchema, (req) => {
    asked.push(req.params.message);
    return reply;
  });
  const no = await owner.callTool({ name: 'delete_entities', arguments: { entityNames: ['payee account'] } });
  assert.equal(no.structuredContent.success, false);
  assert.match(asked[0], /payee account/);
  reply = { action: 'accept', content: { confirm: true } };
  const yes = await owner.callTool({ name: 'delete_entities', arguments: { entityNames: ['payee account'] } });
  assert.deepEqual(yes.structuredContent, { success: true, message: 'Entities deleted successfully' });
  assert.deepEqual((await call(owner, 'read_graph', {})).entities, []);
});

test('two processes writing at once lose nothing', async () => {
  const s = store();
  const [a, b] = [await s.custody('writer-a'), await s.custody('writer-b')];
  await call(a, 'create_entities', { entities: [{ name: 'Shared', entityType: 'log', observations: [] }] });
  const N = 15;
  const writer = async (c, who) => {
    for (let i = 0; i < N; i++) {
      await call(c, 'create_entities', { entities: [{ name: `${who}-${i}`, entityType: 'item', observations: [`made by ${who}`] }] });
      await call(c, 'add_observations', { observations: [{ entityName: 'Shared', contents: [`${who} ${i}`] }] });
      await call(c, 'create_relations', { relations: [{ from: `${who}-${i}`, to: 'Shared', relationType: 'part_of' }] });
    }
  };
  await Promise.all([writer(a, 'a'), writer(b, 'b')]);
  for (const c of [a, b]) {
    const g = await call(c, 'read_graph', {});
    const names = new Set(g.entities.map((e) => e.name));
    for (const who of ['a', 'b']) {
      for (let i = 0; i < N; i++) assert.ok(names.has(`${who}-${i}`), `${who}-${i} is in the graph`);
    }
    const shared = g.entities.find((e) => e.name === 'Shared');
    assert.equal(shared.observations.length, 2 * N, `every observation of Shared is kept: ${shared.observations}`);
    assert.equal(g.relations.filter((r) => r.to === 'Shared').length, 2 * N);
  }
});

// custody mcp --memory-graph against the reference MCP memory server
// (@modelcontextprotocol/server-memory): the same tools and input schemas,
// the same graphs after the same sequence of tool calls, and two processes
// writing at once losing nothing.
//
//   CUSTODY_BIN=/path/to/custody node --test

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const BIN = process.env.CUSTODY_BIN;
if (!BIN) {
  throw new Error('set CUSTODY_BIN to a built custody binary (go build -o custody ./cmd/custody)');
}
const require = createRequire(import.meta.url);
const REFERENCE = join(dirname(require.resolve('@modelcontextprotocol/server-memory/package.json')), 'dist', 'index.js');

const dir = mkdtempSync(join(tmpdir(), 'custody-memgraph-'));
const db = join(dir, 'custody.db');
const clients = [];
let token;

async function connect(name, command, args, env) {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command, args, env: { ...process.env, ...env }, stderr: 'pipe' }));
  clients.push(client);
  return client;
}

const custody = (name) => connect(name, BIN, ['mcp', '--memory-graph', '--db', db, '--token', token]);
const reference = () => connect('reference', process.execPath, [REFERENCE], { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') });

before(() => {
  token = execFileSync(BIN, ['principal', 'add', '--db', db, '--tenant', 'acme', '--name', 'alice', '--role', 'user', '--channel', 'user', '--channel', 'agent'],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  assert.match(token, /^cst_/);
});

after(async () => {
  for (const c of clients) await c.close();
  rmSync(dir, { recursive: true, force: true });
});

// shape keeps what a caller relies on in a JSON schema (an object schema
// without properties has none).
function shape(s) {
  if (!s || typeof s !== 'object') return s;
  const out = {};
  if (s.type) out.type = Array.isArray(s.type) ? s.type.filter((t) => t !== 'null') : s.type;
  if (Array.isArray(out.type) && out.type.length === 1) out.type = out.type[0];
  if (s.properties || s.type === 'object') {
    out.properties = Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, v]) => [k, shape(v)]));
  }
  if (s.items) out.items = shape(s.items);
  out.required = [...(s.required ?? [])].sort();
  return out;
}

async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  const text = res.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  assert.ok(!res.isError, `${name} failed: ${text}`);
  return res.structuredContent;
}

test('the same tools with the same input schemas', async () => {
  const [ref, cus] = [await reference(), await custody('schemas')];
  const tools = async (c) => Object.fromEntries((await c.listTools()).tools.map((t) => [t.name, t]));
  const [r, c] = [await tools(ref), await tools(cus)];
  assert.deepEqual(Object.keys(c).sort(), Object.keys(r).sort());
  assert.equal(Object.keys(c).length, 9);
  for (const name of Object.keys(r)) {
    assert.deepEqual(shape(c[name].inputSchema), shape(r[name].inputSchema), `${name} input schema`);
    assert.deepEqual(shape(c[name].outputSchema), shape(r[name].outputSchema), `${name} output schema`);
  }
});

test('the same sequence of calls gives the same graphs', async () => {
  const [ref, cus] = [await reference(), await custody('sequence')];
  const steps = [
    ['create_entities', { entities: [
      { name: 'Alice', entityType: 'person', observations: ['lives in Lyon', 'likes tea'] },
      { name: 'Bob', entityType: 'person', observations: [] },
      { name: 'Acme', entityType: 'company', observations: ['makes anvils'] },
    ] }],
    ['create_entities', { entities: [{ name: 'Alice', entityType: 'robot', observations: ['ignored'] }, { name: 'Lyon', entityType: 'city', observations: ['in France'] }] }],
    ['create_relations', { relations: [
      { from: 'Alice', to: 'Acme', relationType: 'works_at' },
      { from: 'Bob', to: 'Acme', relationType: 'works_at' },
      { from: 'Alice', to: 'Lyon', relationType: 'lives_in' },
      { from: 'Alice', to: 'Bob', relationType: 'knows' },
    ] }],
    ['create_relations', { relations: [{ from: 'Alice', to: 'Acme', relationType: 'works_at' }] }],
    ['add_observations', { observations: [{ entityName: 'Alice', contents: ['likes tea', 'plays chess'] }, { entityName: 'Bob', contents: ['drives a van'] }] }],
    ['search_nodes', { query: 'TEA' }],
    ['search_nodes', { query: 'anvil' }],
    ['open_nodes', { names: ['Bob', 'Nobody'] }],
    ['delete_observations', { deletions: [{ entityName: 'Alice', observations: ['lives in Lyon', 'not there'] }, { entityName: 'Nobody', observations: ['x'] }] }],
    ['delete_relations', { relations: [{ from: 'Alice', to: 'Bob', relationType: 'knows' }, { from: 'X', to: 'Y', relationType: 'z' }] }],
    ['read_graph', {}],
    ['delete_entities', { entityNames: ['Acme', 'Nobody'] }],
    ['create_entities', { entities: [{ name: 'Acme', entityType: 'company', observations: ['reopened'] }] }],
    ['add_observations', { observations: [{ entityName: 'Acme', contents: ['makes anvils'] }] }],
    ['open_nodes', { names: ['Alice', 'Acme'] }],
    ['read_graph', {}],
  ];
  for (const [name, args] of steps) {
    const want = await call(ref, name, args);
    const have = await call(cus, name, args);
    assert.deepEqual(have, want, `${name} ${JSON.stringify(args)}`);
  }
  // An unknown entity is an error on both, and nothing is written.
  const missing = { observations: [{ entityName: 'Bob', contents: ['half'] }, { entityName: 'Ghost', contents: ['boo'] }] };
  const [r, c] = [await ref.callTool({ name: 'add_observations', arguments: missing }), await cus.callTool({ name: 'add_observations', arguments: missing })];
  assert.equal(r.isError, true);
  assert.equal(c.isError, true);
  assert.match(c.content[0].text, /Entity with name Ghost not found/);
  assert.deepEqual(await call(cus, 'read_graph', {}), await call(ref, 'read_graph', {}));
});

test('two processes writing at once lose nothing', async () => {
  const [a, b] = [await custody('writer-a'), await custody('writer-b')];
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

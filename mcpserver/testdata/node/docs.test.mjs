// The MCP client configurations of docs/mcp.md, run as written: each JSON
// block of mcpServers is started the way an MCP client starts it (its
// "command" found on PATH, its "args" and "env"; or its "url" and
// "headers"), with only the placeholders filled in (the token cst_...,
// the store path, the server address), and must serve its tools. The
// gateway's configurations, which need upstream servers, are run by
// gateway.test.mjs.
//
//   CUSTODY_PATH=/dir/holding/custody node --test docs.test.mjs
//   (or CUSTODY_BIN=/path/to/custody, a binary named custody)

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const DOC = join(HERE, '..', '..', '..', 'docs', 'mcp.md');
const DIR = process.env.CUSTODY_PATH ?? (process.env.CUSTODY_BIN && basename(process.env.CUSTODY_BIN) === 'custody' ? dirname(process.env.CUSTODY_BIN) : '');
if (!DIR) throw new Error('set CUSTODY_PATH to the directory holding the custody binary (or CUSTODY_BIN to a binary named custody)');
const PATH = DIR + delimiter + process.env.PATH;

const tmp = mkdtempSync(join(tmpdir(), 'custody-docs-'));
const db = join(tmp, 'custody.db');
let token = '';
let server;
let base = '';

before(async () => {
  const run = (...args) => execFileSync('custody', args, { encoding: 'utf8', env: { ...process.env, PATH }, stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  token = run('principal', 'add', '--db', db, '--tenant', 'acme', '--name', 'alice', '--role', 'user', '--channel', 'user', '--channel', 'agent');
  server = spawn('custody', ['serve', '--db', db, '--addr', '127.0.0.1:0'], { env: { ...process.env, PATH }, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise((ok, fail) => {
    let log = '';
    server.stderr.setEncoding('utf8');
    server.stderr.on('data', (d) => {
      log += d;
      const m = /custody is serving on (http:\/\/\S+)/.exec(log);
      if (m && !base) {
        base = m[1];
        ok();
      }
    });
    server.on('exit', (code) => fail(new Error(`custody serve exited (${code}):\n${log}`)));
  });
});

after(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
  rmSync(tmp, { recursive: true, force: true });
});

/** Every mcpServers entry of a JSON block of the doc, with the section it is in. */
function configurations() {
  const out = [];
  let section = '';
  const text = readFileSync(DOC, 'utf8');
  const blocks = /^(#+ .*)$|^```json\n([\s\S]*?)^```/gm;
  for (const m of text.matchAll(blocks)) {
    if (m[1]) {
      section = m[1];
      continue;
    }
    let doc;
    try {
      doc = JSON.parse(m[2]);
    } catch {
      continue; // not a whole configuration
    }
    for (const [name, cfg] of Object.entries(doc.mcpServers ?? {})) out.push({ section, name, cfg });
  }
  return out;
}

// fill puts the test's values where the doc has placeholders.
function fill(s) {
  return s.replaceAll('cst_...', token).replaceAll('http://127.0.0.1:8765', base)
    .replace(/^\/.*custody\.db$/, db);
}

const documented = configurations().filter((c) => !(c.cfg.args ?? []).includes('--gateway'));

test('docs/mcp.md has configurations for stdio on a store, stdio on a server, streamable HTTP and the memory graph', () => {
  const kinds = documented.map(({ cfg }) => cfg.url ? 'http' : cfg.args.includes('--memory-graph') ? 'graph' : cfg.args.includes('--url') ? 'stdio-url' : 'stdio-db');
  for (const k of ['http', 'graph', 'stdio-url', 'stdio-db']) assert.ok(kinds.includes(k), `a ${k} configuration in ${DOC}: ${kinds}`);
});

for (const { section, name, cfg } of documented) {
  test(`${section}: "${name}" as written`, async () => {
    let transport;
    if (cfg.url) {
      const headers = Object.fromEntries(Object.entries(cfg.headers ?? {}).map(([k, v]) => [k, fill(v)]));
      transport = new StreamableHTTPClientTransport(new URL(fill(cfg.url)), { requestInit: { headers } });
    } else {
      assert.equal(cfg.command, 'custody', 'the configuration runs the custody binary from PATH');
      const env = Object.fromEntries(Object.entries(cfg.env ?? {}).map(([k, v]) => [k, fill(v)]));
      transport = new StdioClientTransport({ command: cfg.command, args: cfg.args.map(fill), env: { ...process.env, PATH, ...env }, stderr: 'pipe' });
    }
    const client = new Client({ name: 'docs', version: '1.0.0' });
    await client.connect(transport);
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      const want = cfg.args?.includes('--memory-graph') ? 'read_graph' : 'memory_search';
      assert.ok(tools.includes(want), `${name} serves ${want}: ${tools}`);
      const args = want === 'read_graph' ? {} : { query: 'anything' };
      const res = await client.callTool({ name: want, arguments: args });
      assert.ok(!res.isError, JSON.stringify(res));
    } finally {
      await client.close();
    }
  });
}

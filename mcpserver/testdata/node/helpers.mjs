// What the MCP test files share: running the custody binary
// (CUSTODY_BIN) to add principals and to serve, and reading tool results.
import { execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export const BIN = process.env.CUSTODY_BIN;

// principal runs `custody principal add` and returns the token it prints.
export function principal(db, name, ...flags) {
  return execFileSync(BIN, ['principal', 'add', '--db', db, '--tenant', 'acme', '--name', name, ...flags], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

export function textOf(result) {
  return result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

export async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

// serve starts `custody serve` with args on a free port and waits until it
// answers /healthz: { server, base, log() } (log is what it printed).
export async function serve(...args) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let log = '';
  const server = spawn(BIN, ['serve', ...args, '--addr', `127.0.0.1:${port}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  server.stderr.on('data', (d) => { log += d; });
  for (let i = 0; ; i++) {
    try {
      const r = await fetch(`${base}/healthz`);
      if (r.ok) break;
    } catch {
      // not listening yet
    }
    if (server.exitCode !== null || i > 200) {
      throw new Error(`custody serve did not become ready:\n${log}`);
    }
    await sleep(50);
  }
  return { server, base, log: () => log };
}

// stop ends a server serve started, and waits for it to exit.
export async function stop(server) {
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
}

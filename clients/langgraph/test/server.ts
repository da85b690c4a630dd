// A real custody server for the tests: built from the checkout (or
// CUSTODY_BIN), on a fresh store, on a port the kernel picks. The store
// is SQLite, or a new PostgreSQL database in the server that
// CUSTODY_TEST_POSTGRES names (created with psql, dropped by stop).

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

export type Backend = 'sqlite' | 'postgres';

/** The backends to test on: SQLite, and PostgreSQL when CUSTODY_TEST_POSTGRES names a server. */
export const BACKENDS: Backend[] = process.env.CUSTODY_TEST_POSTGRES ? ['sqlite', 'postgres'] : ['sqlite'];

let built = '';

export class Server {
  readonly dir = mkdtempSync(join(tmpdir(), 'custody-lg-'));
  readonly bin: string;
  url = '';
  log = '';
  private readonly store: string[];
  private readonly dropDB?: () => void;
  private proc?: ChildProcess;

  constructor(readonly backend: Backend = 'sqlite') {
    this.bin = process.env.CUSTODY_BIN ?? built;
    if (!this.bin) {
      this.bin = built = join(mkdtempSync(join(tmpdir(), 'custody-bin-')), 'custody');
      execFileSync('go', ['build', '-o', this.bin, './cmd/custody'], { cwd: ROOT, stdio: 'inherit' });
    }
    if (backend === 'postgres') {
      const admin = process.env.CUSTODY_TEST_POSTGRES;
      if (!admin) throw new Error('set CUSTODY_TEST_POSTGRES to a PostgreSQL DSN (source .ci/postgres.sh)');
      const name = `custody_lg_${randomBytes(6).toString('hex')}`;
      execFileSync('psql', [admin, '-q', '-c', `CREATE DATABASE ${name}`], { stdio: ['ignore', 'ignore', 'inherit'] });
      const dsn = new URL(admin);
      dsn.pathname = '/' + name;
      this.store = ['--postgres', dsn.toString(), '--key', join(this.dir, 'pg.key')];
      this.dropDB = () => execFileSync('psql', [admin, '-q', '-c', `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`], { stdio: ['ignore', 'ignore', 'inherit'] });
    } else {
      this.store = ['--db', join(this.dir, 'custody.db')];
    }
  }

  /** custody principal add; returns the token it prints. */
  principal(name: string, ...flags: string[]): string {
    return execFileSync(this.bin, ['principal', 'add', ...this.store, '--tenant', 'acme', '--name', name, ...flags], {
      encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  }

  // The server runs without its per-principal rate limit: the
  // properties send hundreds of requests a second as one principal, and
  // past the default burst every call was answered 429, so a faster
  // machine failed them (a one-call counterexample, shrunk from whatever
  // ran after the bucket emptied). What they check is the store's
  // answers; the limit has its own tests in the server.
  start(): Promise<void> {
    const proc = spawn(this.bin, ['serve', ...this.store, '--addr', '127.0.0.1:0', '--rate-limit', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    this.proc = proc;
    return new Promise((ok, fail) => {
      proc.stderr!.setEncoding('utf8');
      proc.stderr!.on('data', (d: string) => {
        this.log += d;
        const m = /custody is serving on (http:\/\/\S+)/.exec(this.log);
        if (m && !this.url) {
          this.url = m[1];
          ok();
        }
      });
      proc.on('exit', (code) => fail(new Error(`custody serve exited (${code}) before serving:\n${this.log}`)));
    });
  }

  async stop(): Promise<void> {
    const proc = this.proc;
    if (proc && proc.exitCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    }
    this.dropDB?.();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

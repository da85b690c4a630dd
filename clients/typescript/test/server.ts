// A real custody server for the tests: built from the checkout (or
// CUSTODY_BIN), on a fresh SQLite store, on a port the kernel picks.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

export class Server {
  readonly dir = mkdtempSync(join(tmpdir(), 'custody-ts-'));
  readonly db = join(this.dir, 'custody.db');
  readonly bin: string;
  url = '';
  log = '';
  private proc?: ChildProcess;

  constructor() {
    this.bin = process.env.CUSTODY_BIN ?? join(this.dir, 'custody');
    if (!process.env.CUSTODY_BIN) {
      execFileSync('go', ['build', '-o', this.bin, './cmd/custody'], { cwd: ROOT, stdio: 'inherit' });
    }
  }

  /** custody principal add; returns the token it prints. */
  principal(name: string, ...flags: string[]): string {
    return execFileSync(this.bin, ['principal', 'add', '--db', this.db, '--tenant', 'acme', '--name', name, ...flags], {
      encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  }

  /** custody serve on the store, with flags after the defaults. */
  start(...flags: string[]): Promise<void> {
    const proc = spawn(this.bin, ['serve', '--db', this.db, '--addr', '127.0.0.1:0', ...flags], { stdio: ['ignore', 'ignore', 'pipe'] });
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

  /** The verifier key of acme's log, read from the store's own files (custody log key --db). */
  logKey(): string {
    return execFileSync(this.bin, ['log', 'key', '--db', this.db, '--tenant', 'acme'], { encoding: 'utf8' }).trim();
  }

  /** Stops the server and keeps its store, for a restart. */
  async halt(): Promise<void> {
    const proc = this.proc;
    if (proc && proc.exitCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    }
    this.url = '';
    this.log = '';
  }

  /** Copies the whole store of the halted server (database, key, checkpoint file) to dir, or from it. */
  copyStore(dir: string, back = false): void {
    for (const suffix of ['', '-wal', '-shm', '.key', '.checkpoint']) {
      const [from, to] = back ? [join(dir, 'custody.db' + suffix), this.db + suffix] : [this.db + suffix, join(dir, 'custody.db' + suffix)];
      if (existsSync(from)) copyFileSync(from, to);
      else rmSync(to, { force: true });
    }
  }

  async stop(): Promise<void> {
    await this.halt();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

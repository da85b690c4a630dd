// The pin of a server's log (@custody/client/pin) against a real server:
// an honest growing log moves the pin forward, also across a restart with
// the pin saved; a rolled-back or rewritten store, another key, a tampered
// checkpoint and a checkpoint short of the witness policy are refused.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { CustodyClient } from '../src/index.js';
import { BadCheckpointError, LogInconsistentError, NotWitnessedError, Pin, WitnessPolicy, verifyConsistency } from '../src/pin.js';
import { Server } from './server.js';

const s = new Server();
let token = '';
let vkey = '';
const alice = (fetcher?: typeof fetch) => new CustodyClient({ baseUrl: s.url, token, fetch: fetcher });
const remember = async (n: number, what: string) => {
  for (let i = 0; i < n; i++) await alice().remember({ namespace: 'notes', class: 'fact', body: `${what} ${i}`, channel: 'user' });
};

before(async () => {
  token = s.principal('alice', '--role', 'user', '--channel', 'user');
  await s.start();
  vkey = s.logKey();
});
after(() => s.stop());

/** A witness key pair, its vkey (C2SP cosignature/v1, alg 0x04) and a cosigner of checkpoints. */
function witness(name: string): { vkey: string; cosign: (msg: string, time: number, as?: string) => string } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const pub = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const alg = Buffer.concat([Buffer.from([0x04]), pub]);
  const hash = createHash('sha256').update(Buffer.concat([Buffer.from(name + '\n'), alg])).digest().subarray(0, 4);
  return {
    vkey: `${name}+${hash.toString('hex')}+${alg.toString('base64')}`,
    // appends "— name base64(keyhash ‖ time ‖ Ed25519(cosignature/v1\ntime T\n ‖ text))"
    cosign: (msg, time, as = name) => {
      const text = msg.slice(0, msg.indexOf('\n\n') + 1);
      const ts = Buffer.alloc(8);
      ts.writeBigUInt64BE(BigInt(time));
      const sig = sign(null, Buffer.from(`cosignature/v1\ntime ${time}\n${text}`), privateKey as KeyObject);
      return `${msg}\u2014 ${as} ${Buffer.concat([hash, ts, sig]).toString('base64')}\n`;
    },
  };
}

/** A fresh log verifier key (alg 0x01) named origin: not the server's. */
function logKey(origin: string): string {
  const { publicKey } = generateKeyPairSync('ed25519');
  const alg = Buffer.concat([Buffer.from([0x01]), Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url')]);
  const hash = createHash('sha256').update(Buffer.concat([Buffer.from(origin + '\n'), alg])).digest().subarray(0, 4);
  return `${origin}+${hash.toString('hex')}+${alg.toString('base64')}`;
}

/** A fetch that hands the client the server's checkpoint changed by edit. */
const editing = (edit: (cp: string) => string): typeof fetch => async (input, init) => {
  const resp = await fetch(input, init);
  if (!String(input).includes('/v1/log/checkpoint') || !resp.ok) return resp;
  return new Response(edit(await resp.text()), { status: resp.status, headers: resp.headers });
};

describe('pin', () => {
  test('an honest log moves the pin; a rolled-back or rewritten one is refused, the pin kept', async () => {
    await remember(2, 'before the copy');
    await s.halt();
    const old = mkdtempSync(join(tmpdir(), 'custody-ts-old-'));
    try {
      s.copyStore(old); // the copy the store is rolled back to later
      await s.start();
      let pin = new Pin(alice(), vkey);
      assert.equal(pin.note(), undefined);
      const first = await pin.checkpoint();
      await remember(3, 'after the copy');
      const grown = await pin.checkpoint();
      assert.ok(grown.size > first.size, `the grown log's size ${grown.size} extends ${first.size}`);
      assert.equal((await pin.checkpoint()).size, grown.size);
      let saved = pin.note()!;
      assert.match(saved, new RegExp(`\\n${grown.size}\\n`));

      // The honest restart: the saved pin holds, and the log grows on.
      await s.halt();
      await s.start();
      pin = new Pin(alice(), vkey, saved);
      assert.equal(pin.pinned()!.size, grown.size);
      await remember(1, 'after the restart');
      assert.equal((await pin.checkpoint()).size, grown.size + 1);
      saved = pin.note()!;

      // Rolled back to the copy (database, key and checkpoint file): a smaller log.
      await s.halt();
      s.copyStore(old, true);
      await s.start();
      pin = new Pin(alice(), vkey, saved);
      const pinned = pin.pinned()!;
      await assert.rejects(pin.checkpoint(), (e: Error) => e instanceof LogInconsistentError && /rolled back/.test(e.message) && /keep the pin/.test(e.message));
      assert.equal(pin.pinned()!.size, pinned.size, 'the pin stays on an inconsistent log');
      assert.equal(pin.note(), saved);

      // Written again up to the pinned size: another root at that size.
      await remember(pinned.size - first.size, 'another history');
      await assert.rejects(pin.checkpoint(), (e: Error) => e instanceof LogInconsistentError && new RegExp(`at size ${pinned.size} .* another root`).test(e.message));
      // And past it: another history, no proof links it.
      await remember(1, 'another history, longer');
      await assert.rejects(pin.checkpoint(), (e: Error) => e instanceof LogInconsistentError && /rewritten/.test(e.message));
      assert.equal(pin.note(), saved);
      // Its twin: a fresh pin of this history takes it and follows it.
      const fresh = new Pin(alice(), vkey);
      const cp = await fresh.checkpoint();
      await remember(1, 'more of it');
      assert.equal((await fresh.checkpoint()).size, cp.size + 1);
    } finally {
      rmSync(old, { recursive: true, force: true });
    }
  });

  test('a saved pin altered after signing is refused; the one saved is taken', async () => {
    const pin = new Pin(alice(), vkey);
    const cp = await pin.checkpoint();
    assert.equal(new Pin(alice(), vkey, pin.note()).pinned()!.size, cp.size);
    const other = pin.note()!.replace(Buffer.from(cp.root).toString('base64'), Buffer.alloc(32, 7).toString('base64'));
    assert.throws(() => new Pin(alice(), vkey, other), BadCheckpointError, 'a saved pin altered after signing');
  });

  test("only the log's key is taken; a tampered checkpoint is refused", async () => {
    // The positive twin: the true key, the checkpoint as served.
    const cp = await new Pin(alice(), vkey).checkpoint();
    assert.ok(cp.size > 0);
    assert.ok(cp.origin.endsWith('/acme'));
    // Another key under the same origin (name): not the log's.
    const otherKey = logKey(cp.origin);
    await assert.rejects(new Pin(alice(), otherKey).checkpoint(), (e: Error) => e instanceof BadCheckpointError && /not signed by/.test(e.message) && /custody log key/.test(e.message));
    assert.throws(() => new Pin(alice(), vkey.replace(/\+[0-9a-f]{8}\+/, '+00000000+')), /key hash does not match/);
    // The size changed after signing: the signature no longer verifies.
    const bumped = editing((m) => m.replace(/\n(\d+)\n/, (_, n) => `\n${Number(n) + 1}\n`));
    await assert.rejects(new Pin(alice(bumped), vkey).checkpoint(), (e: Error) => e instanceof BadCheckpointError && /does not verify/.test(e.message));
    // The signature line dropped: unsigned.
    const unsigned = editing((m) => m.slice(0, m.indexOf('\n\n') + 2) + '\u2014 someone AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n');
    await assert.rejects(new Pin(alice(unsigned), vkey).checkpoint(), BadCheckpointError);
  });

  test('a witness policy: a quorum of fresh cosignatures is required', async () => {
    const w1 = witness('w1.example/witness');
    const w2 = witness('w2.example/witness');
    const policy = `# two witnesses, both required\nwitness w1 ${w1.vkey} https://w1.example\nwitness w2 ${w2.vkey}\ngroup both all w1 w2\nquorum both\n`;
    const now = Math.floor(Date.now() / 1000);
    const both = editing((m) => w2.cosign(w1.cosign(m, now), now - 60));
    // Met: both cosigned within the day.
    const pin = new Pin(alice(both), vkey, undefined, { policy });
    const cp = await pin.checkpoint();
    assert.match(pin.note()!, /\n\u2014 w1\.example\/witness .*\n\u2014 w2\.example\/witness /su);
    // One cosignature only: short of the quorum, named.
    await assert.rejects(new Pin(alice(editing((m) => w1.cosign(m, now))), vkey, undefined, { policy }).checkpoint(),
      (e: Error) => e instanceof NotWitnessedError && /\(w1\) do not meet the policy's quorum, 2 of w1, w2/.test(e.message));
    // None: the server's checkpoint as it serves it without witnesses.
    await assert.rejects(new Pin(alice(), vkey, undefined, { policy }).checkpoint(), (e: Error) => e instanceof NotWitnessedError && /no valid cosignature/.test(e.message));
    // Stale: w2's cosignature is two days old (a server frozen on an old checkpoint); with a
    // maximum age it meets, it passes.
    const stale = editing((m) => w2.cosign(w1.cosign(m, now), now - 2 * 86400));
    await assert.rejects(new Pin(alice(stale), vkey, undefined, { policy }).checkpoint(), (e: Error) => e instanceof NotWitnessedError && /made since/.test(e.message));
    assert.equal((await new Pin(alice(stale), vkey, undefined, { policy, maxAge: 3 * 86400_000 }).checkpoint()).size, cp.size);
    assert.equal((await new Pin(alice(stale), vkey, undefined, { policy, maxAge: -1 }).checkpoint()).size, cp.size);
    // A cosignature under w2's name by another key, and one over another checkpoint: not counted.
    const impostor = witness('w2.example/witness');
    await assert.rejects(new Pin(alice(editing((m) => impostor.cosign(w1.cosign(m, now), now))), vkey, undefined, { policy }).checkpoint(), NotWitnessedError);
    const elsewhere = editing((m) => {
      const other = m.replace(/\n(\d+)\n/, (_, n) => `\n${Number(n) + 5}\n`);
      const line = w2.cosign(other, now).slice(other.length);
      return w1.cosign(m, now) + line;
    });
    await assert.rejects(new Pin(alice(elsewhere), vkey, undefined, { policy }).checkpoint(), NotWitnessedError);
    // quorum none asks for nothing; a policy naming other logs does not cover this one.
    assert.equal((await new Pin(alice(), vkey, undefined, { policy: 'quorum none\n' }).checkpoint()).size, cp.size);
    assert.throws(() => new Pin(alice(), vkey, undefined, { policy: `log ${logKey(cp.origin)}\nquorum none\n` }), /lists logs, and not the log of the key/);
    assert.equal((await new Pin(alice(), vkey, undefined, { policy: `log ${vkey}\nquorum none\n` }).checkpoint()).size, cp.size);
  });

  test('policies parse as C2SP tlog-policy; errors name the line', () => {
    const w = witness('w.example');
    assert.equal(WitnessPolicy.parse(`witness a ${w.vkey}\nquorum a\n`).witnesses[0].name, 'a');
    assert.throws(() => WitnessPolicy.parse(`witness a ${w.vkey}\n`), /no quorum line/);
    assert.throws(() => WitnessPolicy.parse(`witness a ${w.vkey}\nwitness a ${w.vkey}\nquorum a\n`), /line 2: .*defined twice/);
    assert.throws(() => WitnessPolicy.parse(`witness a ${w.vkey}\ngroup g 2 a\nquorum g\n`), /line 2: threshold/);
    assert.throws(() => WitnessPolicy.parse('quorum b\n'), /line 1: "b" is not defined/);
  });
});

// The consistency proofs of RFC 6962 for every pair of sizes of a small tree, against the hashes
// computed here from the definition: each true proof holds, and each proof with one hash flipped,
// or checked against another root, fails.
describe('consistency proofs', () => {
  const leaf = (i: number) => createHash('sha256').update(Buffer.from([0])).update(`leaf ${i}`).digest();
  const node = (l: Buffer, r: Buffer) => createHash('sha256').update(Buffer.from([1])).update(l).update(r).digest();
  const split = (n: number) => { let k = 1; while (k * 2 < n) k *= 2; return k; };
  const root = (lo: number, hi: number): Buffer => hi - lo === 1 ? leaf(lo) : node(root(lo, lo + split(hi - lo)), root(lo + split(hi - lo), hi));
  // RFC 6962 section 2.1.2, SUBPROOF(m, D[lo:hi], b)
  const subproof = (m: number, lo: number, hi: number, b: boolean): Buffer[] => {
    const n = hi - lo;
    if (m === n) return b ? [] : [root(lo, hi)];
    const k = split(n);
    return m <= k ? [...subproof(m, lo, lo + k, b), root(lo + k, hi)] : [...subproof(m - k, lo + k, hi, false), root(lo, lo + k)];
  };
  test('every pair of sizes up to 20', () => {
    for (let n = 1; n <= 20; n++) {
      for (let m = 1; m <= n; m++) {
        const p = m === n ? [] : subproof(m, 0, n, true);
        assert.equal(verifyConsistency(m, n, p, root(0, m), root(0, n)), undefined, `${m} → ${n}`);
        if (m === n) continue;
        assert.notEqual(verifyConsistency(m, n, p, root(0, m), leaf(99)), undefined, `${m} → ${n}, another new root`);
        assert.notEqual(verifyConsistency(m, n, p, leaf(99), root(0, n)), undefined, `${m} → ${n}, another old root`);
        for (let i = 0; i < p.length; i++) {
          const bad = p.map((h, j) => (j === i ? Buffer.from(h.map((x) => x ^ 1)) : h));
          assert.notEqual(verifyConsistency(m, n, bad, root(0, m), root(0, n)), undefined, `${m} → ${n}, hash ${i} flipped`);
        }
        assert.notEqual(verifyConsistency(m, n, p.slice(1), root(0, m), root(0, n)), undefined, `${m} → ${n}, a hash short`);
      }
    }
  });
});

// The cosignature known-answer vector made by Go's transparency-dev/formats (clients/testdata).
test('cosignature/v1 vector of the Go implementation', () => {
  const v = JSON.parse(readFileSync(new URL('../../../testdata/cosignature-v1.json', import.meta.url), 'utf8')) as { policy: string; checkpoint: string; time: number };
  const p = WitnessPolicy.parse(v.policy);
  assert.deepEqual([...p.cosigners(v.checkpoint, v.time * 1000)], ['w']);
  assert.deepEqual([...p.cosigners(v.checkpoint, (v.time + 1) * 1000)], [], 'made before notBefore');
  assert.deepEqual([...p.cosigners(v.checkpoint.replace(/\n(\d+)\n/, (_, n) => `\n${Number(n) + 1}\n`))], [], 'another checkpoint');
});

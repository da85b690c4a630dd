// A pin of a custody server's log, as the Go client's client.Pin: every
// checkpoint fetched must be signed by the log's key, meet a C2SP witness
// policy with fresh cosignatures (when one is given), and extend the
// checkpoint pinned before, as a consistency proof from the server shows
// (RFC 6962). Formats: docs/log-format.md sections 2, 3 and 5.
//
// It uses node:crypto (Ed25519, SHA-256), hence its own entry point,
// @custody/client/pin, so that the client itself stays on fetch alone.

import { createHash, createPublicKey, verify as edVerify, type KeyObject } from 'node:crypto';

import type { CallOptions, CustodyClient } from './client.js';

/** A checkpoint of a log (C2SP tlog-checkpoint): its origin, tree size and RFC 6962 root. */
export interface Checkpoint {
  origin: string;
  size: number;
  root: Uint8Array;
}

/** The server's checkpoint does not verify under the log's verifier key, or is malformed. */
export class BadCheckpointError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BadCheckpointError';
  }
}

/**
 * The server's log is not an extension of the checkpoint pinned earlier: it is smaller, has
 * another root at the same size, or no consistency proof links the two. The server's store was
 * rolled back or its history rewritten.
 */
export class LogInconsistentError extends Error {
  constructor(message: string) {
    super(`the server's log is not an extension of the checkpoint pinned earlier: ${message}`);
    this.name = 'LogInconsistentError';
  }
}

/**
 * The server's checkpoint does not meet the witness policy: too few of its witnesses cosigned it,
 * or their cosignatures are older than maxAge (a server frozen on an old checkpoint).
 */
export class NotWitnessedError extends Error {
  constructor(message: string) {
    super(`the server's checkpoint does not meet the witness policy: ${message}`);
    this.name = 'NotWitnessedError';
  }
}

/** How old the cosignatures a witness policy counts may be by default: 24 hours, in milliseconds. */
export const DEFAULT_MAX_AGE = 24 * 60 * 60 * 1000;

export interface PinOptions {
  /** A C2SP tlog-policy (its text, or parsed by parsePolicy) every checkpoint must meet. */
  policy?: string | WitnessPolicy;
  /** The most the counted cosignatures may be old, in milliseconds (default DEFAULT_MAX_AGE; negative: any age). */
  maxAge?: number;
  /** The clock (default Date.now). */
  now?: () => number;
  /** Passed to the client's calls (e.g. the subject). */
  call?: CallOptions;
}

// -- keys and signed notes (C2SP signed-note) --------------------------------

const ALG_ED25519 = 0x01;
const ALG_COSIGNATURE_V1 = 0x04;

interface NoteKey {
  name: string;
  hash: Buffer; // the 4-byte key hash that prefixes each signature
  key: KeyObject;
}

function keyHash(name: string, algKey: Buffer): Buffer {
  return createHash('sha256').update(Buffer.concat([Buffer.from(name + '\n', 'utf8'), algKey])).digest().subarray(0, 4);
}

function validName(name: string): boolean {
  return name !== '' && !name.includes('+') && !/[\s\u0000-\u001f\u007f]/u.test(name);
}

/**
 * Parses a vkey "<name>+<8 hex key hash>+<base64(alg ‖ Ed25519 key)>". A log key has alg 0x01;
 * a witness key (cosignature/v1) 0x04, or 0x01 as golang.org/x/mod's and torchwood's keys are
 * also taken, its hash then computed over 0x04 ‖ key.
 */
function parseVKey(vkey: string, witness: boolean): NoteKey {
  const what = witness ? 'witness key' : 'verifier key';
  const hint = witness ? 'the key as the witness prints it' : 'the key custody serve prints, origin+hash+base64';
  const t = vkey.trim();
  const a = t.indexOf('+'), b = t.indexOf('+', a + 1);
  const parts = a < 0 || b < 0 ? [] : [t.slice(0, a), t.slice(a + 1, b), t.slice(b + 1)];
  const bad = (why: string) => new Error(`custody client: ${what} ${JSON.stringify(vkey)}: ${why} (use ${hint})`);
  if (parts.length !== 3 || !validName(parts[0]) || !/^[0-9a-f]{8}$/.test(parts[1])) throw bad('not name+hash+base64');
  const raw = Buffer.from(parts[2], 'base64');
  if (raw.toString('base64') !== parts[2] || raw.length !== 33) throw bad('the key is not a base64 Ed25519 key with its algorithm byte');
  const alg = raw[0];
  if (alg !== ALG_ED25519 && !(witness && alg === ALG_COSIGNATURE_V1)) throw bad(`unknown key algorithm ${alg}`);
  const pub = raw.subarray(1);
  const hash = keyHash(parts[0], witness ? Buffer.concat([Buffer.from([ALG_COSIGNATURE_V1]), pub]) : raw);
  if (alg === (witness ? ALG_COSIGNATURE_V1 : ALG_ED25519) && hash.toString('hex') !== parts[1]) throw bad('its key hash does not match its name and key');
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: pub.toString('base64url') }, format: 'jwk' });
  return { name: parts[0], hash, key };
}

interface Note {
  text: string; // the signed text, ending in a newline
  sigs: { name: string; sig: Buffer }[];
}

/** Splits a signed note into its text and signature lines, as golang.org/x/mod/sumdb/note.Open. */
function splitNote(msg: string): Note {
  const split = msg.lastIndexOf('\n\n');
  if (split < 0 || !msg.endsWith('\n')) throw new BadCheckpointError('the checkpoint is not a signed note (no blank line before its signatures)');
  const text = msg.slice(0, split + 1);
  if (/[\u0000-\u0009\u000b-\u001f\u007f]/u.test(text)) throw new BadCheckpointError('the checkpoint text holds a control character');
  const sigs: Note['sigs'] = [];
  for (const line of msg.slice(split + 2, -1).split('\n')) {
    const m = /^\u2014 (\S+) (\S+)$/u.exec(line);
    if (!m) throw new BadCheckpointError(`the checkpoint has a malformed signature line ${JSON.stringify(line)}`);
    const sig = Buffer.from(m[2], 'base64');
    if (sig.toString('base64') !== m[2] || sig.length < 5) throw new BadCheckpointError(`the checkpoint has a malformed signature of ${m[1]}`);
    sigs.push({ name: m[1], sig });
  }
  return { text, sigs };
}

/** The signatures of note by key (its name and key hash). */
function sigsOf(note: Note, key: NoteKey): Buffer[] {
  return note.sigs.filter((s) => s.name === key.name && s.sig.subarray(0, 4).equals(key.hash)).map((s) => s.sig.subarray(4));
}

/** Parses a checkpoint body strictly: three lines, a canonical decimal size, a base64 SHA-256 root. */
function parseCheckpoint(text: string, origin: string): Checkpoint {
  const lines = text.split('\n');
  if (lines.length !== 4 || lines[3] !== '') throw new BadCheckpointError(`the checkpoint body has ${lines.length - 1} lines, want 3`);
  const [o, sizeText, rootText] = lines;
  if (o !== origin) throw new BadCheckpointError(`the checkpoint's origin is ${JSON.stringify(o)}, want ${JSON.stringify(origin)}`);
  const size = Number(sizeText);
  if (!/^(0|[1-9][0-9]*)$/.test(sizeText) || !Number.isSafeInteger(size)) throw new BadCheckpointError(`the checkpoint size ${JSON.stringify(sizeText)} is not a canonical decimal`);
  const root = Buffer.from(rootText, 'base64');
  if (root.length !== 32 || root.toString('base64') !== rootText) throw new BadCheckpointError(`the checkpoint root ${JSON.stringify(rootText)} is not a base64 SHA-256 hash`);
  return { origin: o, size, root: new Uint8Array(root) };
}

/** Verifies msg under the log's key and parses it (as the Go client's tlog.OpenCheckpoint). */
function openCheckpoint(msg: string, key: NoteKey): Checkpoint {
  const note = splitNote(msg);
  const sigs = sigsOf(note, key);
  if (sigs.length === 0) throw new BadCheckpointError(`the checkpoint is not signed by ${key.name}+${key.hash.toString('hex')}`);
  for (const sig of sigs) {
    if (sig.length !== 64 || !edVerify(null, Buffer.from(note.text, 'utf8'), key.key, sig)) {
      throw new BadCheckpointError(`the checkpoint's signature by ${key.name} does not verify`);
    }
  }
  return parseCheckpoint(note.text, key.name);
}

// -- witness policies (C2SP tlog-policy) and cosignatures (C2SP tlog-cosignature) --

interface Group {
  k: number;
  members: string[];
}

export interface PolicyWitness {
  name: string;
  vkey: string;
  url?: string;
}

/** A C2SP tlog-policy: the witnesses whose cosignatures count and the quorum of them a checkpoint needs. */
export class WitnessPolicy {
  /** The verifier keys of the policy's log lines, in order. */
  readonly logs: string[] = [];
  readonly witnesses: PolicyWitness[] = [];
  private readonly keys = new Map<string, NoteKey>();
  private readonly groups = new Map<string, Group>();
  private quorum?: Group; // undefined: quorum none

  private constructor() {}

  /** Parses a policy file's text; every error names its line. */
  static parse(text: string): WitnessPolicy {
    const p = new WitnessPolicy();
    const used = new Set<string>();
    const keys = new Set<string>();
    let sawQuorum = false;
    const defined = (n: string) => p.keys.has(n) || p.groups.has(n) || n === 'none';
    text.split('\n').forEach((line, i) => {
      const bad = (why: string) => new Error(`policy line ${i + 1}: ${why}`);
      if (/[\u0000-\u0008\u000a-\u001f\u007f]/u.test(line)) throw bad('control character (only tab and newline are allowed)');
      const f = line.split(/[ \t]+/).filter((x) => x !== '');
      if (f.length === 0 || f[0].startsWith('#')) return;
      const uniqueKey = (vkey: string, what: string) => {
        const k = vkey.slice(vkey.lastIndexOf('+') + 1);
        if (keys.has(k)) throw bad(`the key of ${what} is listed twice`);
        keys.add(k);
      };
      const checkURL = (u?: string) => {
        if (u === undefined) return;
        let ok = false;
        try { const x = new URL(u); ok = (x.protocol === 'http:' || x.protocol === 'https:') && x.host !== ''; } catch { /* not a URL */ }
        if (!ok) throw bad(`${JSON.stringify(u)} is not an http(s) URL`);
      };
      switch (f[0]) {
        case 'log': {
          if (f.length < 2 || f.length > 3) throw bad('want: log <vkey> [<url>]');
          let k: NoteKey;
          try { k = parseVKey(f[1], false); } catch (e) { throw bad(`log key: ${(e as Error).message}`); }
          checkURL(f[2]);
          uniqueKey(f[1], `log ${k.name}`);
          p.logs.push(f[1]);
          break;
        }
        case 'witness': {
          if (f.length < 3 || f.length > 4) throw bad('want: witness <name> <vkey> [<url>]');
          if (defined(f[1])) throw bad(`the name ${JSON.stringify(f[1])} is defined twice`);
          let k: NoteKey;
          try { k = parseVKey(f[2], true); } catch (e) { throw bad((e as Error).message); }
          checkURL(f[3]);
          uniqueKey(f[2], `witness ${f[1]}`);
          p.keys.set(f[1], k);
          p.witnesses.push({ name: f[1], vkey: f[2], url: f[3]?.replace(/\/$/, '') });
          break;
        }
        case 'group': {
          if (f.length < 4) throw bad('want: group <name> all|any|<k> <name>...');
          if (defined(f[1])) throw bad(`the name ${JSON.stringify(f[1])} is defined twice`);
          const members = f.slice(3);
          for (const m of members) {
            if (m === 'none') throw bad('none cannot be a group member');
            if (!defined(m)) throw bad(`${JSON.stringify(m)} is not defined on a line before`);
            if (used.has(m)) throw bad(`${JSON.stringify(m)} is a member of a group already`);
            used.add(m);
          }
          let k: number;
          if (f[2] === 'all') k = members.length;
          else if (f[2] === 'any') k = 1;
          else {
            k = Number(f[2]);
            if (!/^[1-9][0-9]*$/.test(f[2]) || k > members.length) throw bad(`threshold ${JSON.stringify(f[2])}: want all, any, or a decimal k with 1 <= k <= ${members.length}`);
          }
          p.groups.set(f[1], { k, members });
          break;
        }
        case 'quorum': {
          if (f.length !== 2) throw bad('want: quorum <name>');
          if (sawQuorum) throw bad('a second quorum line (a policy has exactly one)');
          sawQuorum = true;
          if (f[1] === 'none') break;
          if (p.groups.has(f[1])) p.quorum = p.groups.get(f[1]);
          else if (defined(f[1])) p.quorum = { k: 1, members: [f[1]] };
          else throw bad(`${JSON.stringify(f[1])} is not defined on a line before`);
          break;
        }
        default:
          throw bad(`unknown keyword ${JSON.stringify(f[0])} (want log, witness, group or quorum)`);
      }
    });
    if (!sawQuorum) throw new Error('policy: no quorum line (write quorum <name>, or quorum none)');
    return p;
  }

  /** Whether the policy asks for no cosignature (quorum none). */
  none(): boolean {
    return this.quorum === undefined;
  }

  /**
   * The names of the policy's witnesses with a valid cosignature/v1 on msg (a signed checkpoint
   * with its cosignature lines) made no earlier than notBefore (Unix milliseconds; 0: any).
   */
  cosigners(msg: string, notBefore = 0): Set<string> {
    const out = new Set<string>();
    let note: Note;
    try { note = splitNote(msg); } catch { return out; }
    for (const w of this.witnesses) {
      const key = this.keys.get(w.name)!;
      for (const sig of sigsOf(note, key)) {
        if (sig.length !== 8 + 64) continue;
        const t = sig.readBigUInt64BE(0);
        const signed = Buffer.from(`cosignature/v1\ntime ${t}\n${note.text}`, 'utf8');
        if (!edVerify(null, signed, key.key, sig.subarray(8))) continue;
        if (Number(t) * 1000 < notBefore) continue;
        out.add(w.name);
        break;
      }
    }
    return out;
  }

  /** Throws NotWitnessedError unless msg meets the policy with cosignatures made since notBefore (ms; 0: any). */
  check(msg: string, notBefore = 0): void {
    if (this.quorum === undefined) return;
    const have = this.cosigners(msg, notBefore);
    if (this.holds(this.quorum, have)) return;
    const names = this.witnesses.map((w) => w.name).filter((n) => have.has(n));
    const fresh = notBefore > 0 ? ` made since ${new Date(notBefore).toISOString().replace(/\.\d+Z$/, 'Z')}` : '';
    const quorum = this.describe(this.quorum);
    throw new NotWitnessedError(names.length === 0
      ? `the checkpoint carries no valid cosignature${fresh} of the policy's witnesses; its quorum is ${quorum} (wait for the witnesses to cosign, or ask the server's operator why they do not)`
      : `the checkpoint's valid cosignatures${fresh} (${names.join(', ')}) do not meet the policy's quorum, ${quorum} (wait for the witnesses to cosign, or ask the server's operator why they do not)`);
  }

  private holds(g: Group, have: Set<string>): boolean {
    let n = 0;
    for (const m of g.members) {
      const sub = this.groups.get(m);
      if (sub ? this.holds(sub, have) : have.has(m)) n++;
    }
    return n >= g.k;
  }

  private describe(g: Group): string {
    const parts = g.members.map((m) => {
      const sub = this.groups.get(m);
      return sub ? `${m} (${this.describe(sub)})` : m;
    });
    return parts.length === 1 ? parts[0] : `${g.k} of ${parts.join(', ')}`;
  }
}

// -- RFC 6962 consistency proofs ----------------------------------------------

function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  return createHash('sha256').update(Buffer.from([1])).update(left).update(right).digest();
}

const bitLen = (x: bigint) => (x === 0n ? 0 : x.toString(2).length);
const onesCount = (x: bigint) => [...x.toString(2)].filter((c) => c === '1').length;
const trailingZeros = (x: bigint) => { let n = 0; while (x > 0n && (x & 1n) === 0n) { x >>= 1n; n++; } return n; };

/**
 * Verifies an RFC 6962 consistency proof from a tree of size1 leaves with root1 to one of size2
 * with root2, as transparency-dev/merkle's proof.VerifyConsistency (which the server's own
 * verifier uses). Returns why it fails, or undefined when it holds.
 */
export function verifyConsistency(size1: number, size2: number, proof: Uint8Array[], root1: Uint8Array, root2: Uint8Array): string | undefined {
  const eq = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));
  if (size2 < size1) return `size ${size2} is smaller than ${size1}`;
  if (size1 === size2) return proof.length > 0 ? 'a proof between equal sizes must be empty' : eq(root1, root2) ? undefined : 'the roots differ';
  if (size1 === 0) return proof.length > 0 ? 'a proof from the empty tree must be empty' : undefined;
  if (proof.length === 0) return 'the proof is empty';
  const s1 = BigInt(size1), s2 = BigInt(size2);
  const index = s1 - 1n;
  let inner = bitLen(index ^ (s2 - 1n));
  const border = onesCount(index >> BigInt(inner));
  const shift = trailingZeros(s1);
  inner -= shift;
  let seed: Buffer = Buffer.from(proof[0]);
  let start = 1;
  if (s1 === 1n << BigInt(shift)) {
    seed = Buffer.from(root1);
    start = 0;
  }
  if (proof.length !== start + inner + border) return `the proof has ${proof.length} hashes, want ${start + inner + border}`;
  const rest = proof.slice(start).map((h) => Buffer.from(h));
  if (rest.some((h) => h.length !== 32) || seed.length !== 32) return 'the proof holds a hash that is not 32 bytes';
  const mask = index >> BigInt(shift);
  let h1: Buffer = seed, h2: Buffer = seed;
  for (let i = 0; i < inner; i++) {
    if ((mask >> BigInt(i)) & 1n) {
      h1 = nodeHash(rest[i], h1);
      h2 = nodeHash(rest[i], h2);
    } else {
      h2 = nodeHash(h2, rest[i]);
    }
  }
  for (const h of rest.slice(inner)) {
    h1 = nodeHash(h, h1);
    h2 = nodeHash(h, h2);
  }
  if (!eq(h1, root1)) return 'the proof does not lead to the pinned root';
  if (!eq(h2, root2)) return "the proof does not lead to the server's root";
  return undefined;
}

// -- the pin -------------------------------------------------------------------

/**
 * Holds the newest checkpoint of a server's log that the client verified, and holds the server to
 * it: every checkpoint fetched after must be signed by the server's key, meet the witness policy
 * if one is given, and extend the pinned one. A server whose store was rolled back or rewritten
 * after the pin is caught by the first check after.
 *
 * Save note() between runs (e.g. to a file) and give it back as saved, so the pin outlives the
 * process; the saved note is also a checkpoint custody verify --checkpoint takes.
 */
export class Pin {
  private readonly key: NoteKey;
  private readonly policy?: WitnessPolicy;
  private readonly maxAge: number;
  private readonly now: () => number;
  private cp?: Checkpoint;
  private msg?: string;
  private queue: Promise<unknown> = Promise.resolve();

  /**
   * verifierKey is the text form of the key that verifies the log's checkpoints
   * ("<origin>+<hash>+<key>", as custody serve and custody log key print it); saved, if given,
   * is a checkpoint pinned earlier (note()), which must verify under the key.
   */
  constructor(private readonly client: CustodyClient, verifierKey: string, saved?: string, private readonly opts: PinOptions = {}) {
    this.key = parseVKey(verifierKey, false);
    this.policy = typeof opts.policy === 'string' ? WitnessPolicy.parse(opts.policy) : opts.policy;
    if (this.policy && this.policy.logs.length > 0 && !this.policy.logs.includes(verifierKey.trim())) {
      throw new Error(`custody client: the witness policy lists logs, and not the log of the key ${JSON.stringify(verifierKey)} (add a log line for it, or use the policy of this log)`);
    }
    this.maxAge = opts.maxAge === undefined || opts.maxAge === 0 ? DEFAULT_MAX_AGE : opts.maxAge;
    this.now = opts.now ?? Date.now;
    if (saved) {
      try {
        this.cp = openCheckpoint(saved, this.key);
      } catch (e) {
        throw new BadCheckpointError(`custody client: the pinned checkpoint does not verify under the verifier key: ${(e as Error).message} (give the key of the log the pin was made with)`);
      }
      this.msg = saved;
    }
  }

  /** The pinned checkpoint as the server signed it, undefined before the first. */
  note(): string | undefined {
    return this.msg;
  }

  /** The pinned checkpoint, undefined before the first. */
  pinned(): Checkpoint | undefined {
    return this.cp && { ...this.cp, root: new Uint8Array(this.cp.root) };
  }

  /**
   * Fetches the server's checkpoint (GET /v1/log/checkpoint), verifies its signature, the witness
   * policy and, when one is pinned, that it extends the pinned one (GET /v1/log/proof/consistency);
   * then pins it and returns it. Throws BadCheckpointError, NotWitnessedError or
   * LogInconsistentError, and the pin stays as it was. Calls are taken one at a time.
   */
  checkpoint(): Promise<Checkpoint> {
    const run = this.queue.then(() => this.advance());
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async advance(): Promise<Checkpoint> {
    const msg = await this.client.checkpoint(this.opts.call);
    let cp: Checkpoint;
    try {
      cp = openCheckpoint(msg, this.key);
    } catch (e) {
      throw new BadCheckpointError(`custody client: the server's checkpoint does not verify under the verifier key: ${(e as Error).message} (check that the key is this tenant's, as custody log key --tenant prints it; if it is, the server is not the log you pinned)`);
    }
    if (this.policy) this.policy.check(msg, this.maxAge > 0 ? this.now() - this.maxAge : 0);
    if (this.cp) await this.consistent(this.cp, cp);
    this.cp = cp;
    this.msg = msg;
    return this.pinned()!;
  }

  private async consistent(old: Checkpoint, cp: Checkpoint): Promise<void> {
    const evidence = 'keep the pin as evidence and stop trusting this server until its operator explains';
    if (cp.size < old.size) {
      throw new LogInconsistentError(`the server's checkpoint covers ${cp.size} entries, fewer than the ${old.size} of the pinned one (the store was rolled back or truncated); ${evidence}`);
    }
    if (cp.size === old.size) {
      if (!Buffer.from(cp.root).equals(Buffer.from(old.root))) {
        throw new LogInconsistentError(`at size ${cp.size} the server's checkpoint has another root than the pinned one (history was rewritten); ${evidence}`);
      }
      return;
    }
    const pr = await this.client.consistencyProof(old.size, cp.size, this.opts.call);
    const hashes = (pr.hashes ?? []).map((h) => Buffer.from(h, 'base64'));
    const why = verifyConsistency(old.size, cp.size, hashes, old.root, cp.root);
    if (why !== undefined) {
      throw new LogInconsistentError(`the server proves no consistency from the pinned size ${old.size} to ${cp.size} (history was rewritten): ${why}; ${evidence}`);
    }
  }
}

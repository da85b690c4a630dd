// How an item is a custody record. The record's body is the item's value
// as JSON, nothing else: custody indexes a value by its text, never by an
// envelope of the store's own words. Everything that says the record is an
// item (the root, the namespace tuple, the key, whether it is live, when it
// was created) is in the record's metadata, set by this store alone: a
// memory that merely looks like an item (a body holding
// {"namespace": [...], "key": ..., "value": ...}) is never one.

import { createHash } from 'node:crypto';
import type { MemoryRecord } from '@custody/client';

/** The metadata keys of an item's record. custody's MCP tools refuse every key under "langgraph.", so a model cannot set them. */
export const META = {
  /** The store's root: marks the record as an item of the store with that root. */
  root: 'langgraph.root',
  /** The namespace tuple, as JSON. */
  namespace: 'langgraph.ns',
  /** The item's key, as a JSON string (so that any key fits custody's metadata text). */
  key: 'langgraph.key',
  /** "1" for an item, "0" for a deletion. */
  live: 'langgraph.live',
  /** The item's createdAt (RFC 3339), when this version updates an item. */
  created: 'langgraph.created',
  /** The log index of the version that created the item, when this version updates it. */
  since: 'langgraph.since',
  /** The log index of the key's first version ever, when this is a later one. */
  first: 'langgraph.first',
  /** "1" when the body tags values JSON has no form for (Date). */
  tagged: 'langgraph.tagged',
} as const;

/** custody's bound on one metadata value. */
export const MAX_META_VALUE = 512;

const SEGMENT = /^[A-Za-z0-9_.-]{1,64}$/;
const KEY = /^[A-Za-z0-9_.:-]{1,128}$/;

/** At most this many labels: with the root, a custody namespace has at most 8 segments. */
export const MAX_LABELS = 7;

function hashed(s: string, n: number): string {
  return '_h' + createHash('sha256').update(s).digest('hex').slice(0, n);
}

/** The custody segment of a label: itself when it is one (and not a hash's spelling), else its hash. */
export function segment(label: string): string {
  return SEGMENT.test(label) && !label.startsWith('_h') ? label : hashed(label, 32);
}

/** The custody key of an item's key. */
export function custodyKey(key: string): string {
  return KEY.test(key) && !key.startsWith('_h') ? key : hashed(key, 40);
}

// Values JSON has no form for are tagged: {"$date": iso}. An object of
// the value that already looks like a tag is wrapped in {"$object": ...},
// so that decoding gives back exactly what was put. Tags are used (and
// looked for) only in a record marked tagged.
const DATE = '$date';
const OBJECT = '$object';

function looksTagged(o: Record<string, unknown>): boolean {
  const keys = Object.keys(o);
  return keys.length === 1 && (keys[0] === DATE || keys[0] === OBJECT);
}

function tag(v: unknown, used: { on: boolean }): unknown {
  if (v instanceof Date) {
    used.on = true;
    return { [DATE]: Number.isNaN(v.getTime()) ? null : v.toISOString() };
  }
  if (Array.isArray(v)) return v.map((x) => tag(x, used));
  if (v && typeof v === 'object') {
    // fromEntries makes own properties, even of a key named __proto__
    const out = Object.fromEntries(Object.entries(v).map(([k, x]) => [k, tag(x, used)]));
    if (looksTagged(out)) {
      used.on = true;
      return { [OBJECT]: out };
    }
    return out;
  }
  return v;
}

function untag(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(untag);
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (looksTagged(o)) {
      if (DATE in o) return o[DATE] === null ? new Date(NaN) : new Date(o[DATE] as string);
      return Object.fromEntries(Object.entries(o[OBJECT] as Record<string, unknown>).map(([k, x]) => [k, untag(x)]));
    }
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, untag(x)]));
  }
  return v;
}

/** The body of a value, and whether it is tagged. JSON's own rules apply otherwise (undefined fields are left out). */
export function encodeValue(value: unknown): { body: string; tagged: boolean } {
  const used = { on: false };
  const body = JSON.stringify(tag(value, used));
  if (body === undefined) throw new TypeError(`CustodyStore: a value must be JSON data, not ${typeof value}`);
  return { body, tagged: used.on };
}

export function decodeValue(body: string, tagged: boolean): unknown {
  const v = JSON.parse(body);
  return tagged ? untag(v) : v;
}

/** What the metadata of an item's record says. */
export interface Marks {
  namespace: string[];
  key: string;
  live: boolean;
  created?: string;
  since?: number;
  first?: number;
  tagged: boolean;
}

/** The marks of a record of the store with this root, or null when the record is not one. */
export function marksOf(r: MemoryRecord, root: string): Marks | null {
  const m = r.metadata ?? {};
  if (m[META.root] !== root || typeof m[META.key] !== 'string' || typeof m[META.namespace] !== 'string') return null;
  let namespace: unknown;
  let key: unknown;
  try {
    namespace = JSON.parse(m[META.namespace]);
    key = JSON.parse(m[META.key]);
  } catch {
    return null;
  }
  if (!Array.isArray(namespace) || !namespace.every((s) => typeof s === 'string') || typeof key !== 'string') return null;
  const num = (s: string | undefined) => (s === undefined ? undefined : Number(s));
  return {
    namespace: namespace as string[], key, live: m[META.live] === '1', created: m[META.created],
    since: num(m[META.since]), first: num(m[META.first]), tagged: m[META.tagged] === '1',
  };
}

/** The metadata of a version; throws when the namespace or key is too long for custody's metadata. */
export function metadataOf(root: string, k: Marks): Record<string, string> {
  const m: Record<string, string> = {
    [META.root]: root, [META.namespace]: JSON.stringify(k.namespace), [META.key]: JSON.stringify(k.key), [META.live]: k.live ? '1' : '0',
  };
  if (k.created !== undefined) m[META.created] = k.created;
  if (k.since !== undefined) m[META.since] = String(k.since);
  if (k.first !== undefined) m[META.first] = String(k.first);
  if (k.tagged) m[META.tagged] = '1';
  for (const [name, v] of [['namespace', m[META.namespace]], ['key', m[META.key]]]) {
    if (Buffer.byteLength(v) > MAX_META_VALUE) {
      throw new RangeError(`CustodyStore: the ${name} ${v.slice(0, 60)}... is ${Buffer.byteLength(v)} bytes as JSON; custody keeps at most ${MAX_META_VALUE}: use a shorter one`);
    }
  }
  return m;
}

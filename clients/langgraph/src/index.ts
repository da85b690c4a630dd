// @custody/langgraph: a LangGraph.js BaseStore on custody. Each put is a
// candidate memory on the channel the store is configured with, so
// custody's admission decides what becomes memory; what it holds is not
// returned by get or search. Results carry their provenance in the item's
// value, under "_provenance".
//
// A namespace tuple ["memories", "u1"] is the custody namespace
// <root>/memories/u1 (segments that are not custody segments are hashed;
// the tuple itself is kept in the record). A deletion is a new version of
// the record that marks it deleted.

import { createHash } from 'node:crypto';
import {
  BaseStore, type GetOperation, type Item, type ListNamespacesOperation, type MatchCondition, type Operation,
  type OperationResults, type PutOperation, type SearchItem, type SearchOperation,
} from '@langchain/langgraph-checkpoint';
import type { CustodyClient, Decision, MemoryClass, MemoryRecord } from '@custody/client';

export interface CustodyStoreOptions {
  /** The client, acting as the principal whose channel the puts are written on. */
  client: CustodyClient;
  /** The channel of every put; the principal must be registered with it. */
  channel: string;
  /** The custody namespace under which the store's namespaces live (default "langgraph"). */
  root?: string;
  /** The class of every put (default "fact"). */
  class?: MemoryClass;
  /** The custody session the puts come from (for an agent channel). */
  session?: string;
  /** The subject to act for (an agent principal must name it; default the client's). */
  subject?: string;
  /** Records expire this many minutes after a put (custody's expires_at). */
  ttlMinutes?: number;
  /** Called with custody's decision on each put and delete. */
  onDecision?: (d: Decision, op: { namespace: string[]; key: string }) => void;
}

/** Provenance is the custody side of an item. */
export interface Provenance {
  id: string;
  channel: string;
  authority: string;
  writer: string;
  source_ref: string;
  state: string;
  log_index: number;
  created_at: string;
}

interface Body {
  namespace: string[];
  key: string;
  value?: Record<string, unknown>;
  deleted?: boolean;
}

const SEGMENT = /^[A-Za-z0-9_.-]{1,64}$/;
const KEY = /^[A-Za-z0-9_.:-]{1,128}$/;
const PAGE = 100;

function hashed(parts: string[], n: number): string {
  return '_h' + createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, n);
}

export class CustodyStore extends BaseStore {
  private readonly o: Required<Pick<CustodyStoreOptions, 'root' | 'class'>> & CustodyStoreOptions;

  constructor(opts: CustodyStoreOptions) {
    super();
    this.o = { root: 'langgraph', class: 'fact', ...opts };
    if (!SEGMENT.test(this.o.root)) throw new Error(`CustodyStore: root ${JSON.stringify(this.o.root)} is not a custody namespace segment`);
  }

  /** The custody namespace of a tuple. */
  custodyNamespace(ns: string[]): string {
    if (ns.length === 0 || ns.length > 7) {
      throw new Error(`CustodyStore: a namespace has 1 to 7 labels, not ${ns.length}: ${JSON.stringify(ns)}`);
    }
    return [this.o.root, ...ns.map((s) => (SEGMENT.test(s) && !s.startsWith('_h') ? s : hashed([s], 32)))].join('/');
  }

  /** The custody key of an item's key. */
  custodyKey(key: string): string {
    return KEY.test(key) && !key.startsWith('_h') ? key : hashed([key], 40);
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const out: unknown[] = [];
    for (const op of operations) {
      if ('key' in op && 'value' in op) out.push(await this.doPut(op as PutOperation));
      else if ('key' in op) out.push(await this.doGet(op as GetOperation));
      else if ('namespacePrefix' in op) out.push(await this.doSearch(op as SearchOperation));
      else out.push(await this.doListNamespaces(op as ListNamespacesOperation));
    }
    return out as OperationResults<Op>;
  }

  private sub() {
    return { subject: this.o.subject };
  }

  private item(r: MemoryRecord): Item | null {
    let b: Body;
    try {
      b = JSON.parse(r.body);
    } catch {
      return null; // not written by a store
    }
    if (!b || !Array.isArray(b.namespace) || typeof b.key !== 'string' || b.deleted) return null;
    const provenance: Provenance = {
      id: r.id, channel: r.channel, authority: r.authority, writer: r.writer, source_ref: r.source_ref,
      state: r.state, log_index: r.log_index, created_at: r.created_at,
    };
    const at = new Date(r.created_at);
    return { namespace: b.namespace, key: b.key, value: { ...(b.value ?? {}), _provenance: provenance }, createdAt: at, updatedAt: at };
  }

  private async doGet(op: GetOperation): Promise<Item | null> {
    const page = await this.o.client.list({ namespace: this.custodyNamespace(op.namespace), key: this.custodyKey(op.key), ...this.sub() });
    for (const r of page.items) {
      const it = this.item(r);
      if (it && it.key === op.key && sameTuple(it.namespace, op.namespace)) return it;
    }
    return null;
  }

  private async doPut(op: PutOperation): Promise<void> {
    const body: Body = op.value === null
      ? { namespace: op.namespace, key: op.key, deleted: true }
      : { namespace: op.namespace, key: op.key, value: withoutProvenance(op.value) };
    const expires = this.o.ttlMinutes ? new Date(Date.now() + this.o.ttlMinutes * 60_000).toISOString() : undefined;
    const d = await this.o.client.remember({
      namespace: this.custodyNamespace(op.namespace), key: this.custodyKey(op.key), class: this.o.class,
      body: JSON.stringify(body), channel: this.o.channel, session: this.o.session, expires_at: expires, ...this.sub(),
    });
    this.o.onDecision?.(d, { namespace: op.namespace, key: op.key });
  }

  /** Every live item of the store (newest version per key). */
  private async all(): Promise<Item[]> {
    const items: Item[] = [];
    for await (const r of this.o.client.memories({ pageSize: PAGE, ...this.sub() })) {
      if (r.namespace !== this.o.root && !r.namespace.startsWith(this.o.root + '/')) continue;
      const it = this.item(r);
      if (it) items.push(it);
    }
    return items;
  }

  private async doSearch(op: SearchOperation): Promise<SearchItem[]> {
    const prefix = op.namespacePrefix;
    let items: SearchItem[];
    if (op.query) {
      const hits = await this.o.client.search({ query: op.query, limit: 100, ...this.sub() });
      items = [];
      for (const h of hits) {
        const it = this.item(h as MemoryRecord);
        if (it) items.push({ ...it, score: h.score });
      }
    } else {
      items = await this.all();
      items.sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime());
    }
    const matched = items.filter((it) => startsWith(it.namespace, prefix) && matches(it.value, op.filter));
    const offset = op.offset ?? 0;
    return matched.slice(offset, offset + (op.limit ?? 10));
  }

  private async doListNamespaces(op: ListNamespacesOperation): Promise<string[][]> {
    const seen = new Map<string, string[]>();
    for (const it of await this.all()) {
      if (!(op.matchConditions ?? []).every((c) => conditionHolds(it.namespace, c))) continue;
      const ns = op.maxDepth !== undefined ? it.namespace.slice(0, op.maxDepth) : it.namespace;
      seen.set(JSON.stringify(ns), ns);
    }
    const all = [...seen.values()].sort((a, b) => a.join('\u0000').localeCompare(b.join('\u0000')));
    return all.slice(op.offset, op.offset + op.limit);
  }
}

function sameTuple(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((s, i) => s === b[i]);
}

function startsWith(ns: string[], prefix: string[]): boolean {
  return prefix.length <= ns.length && prefix.every((s, i) => s === ns[i]);
}

function conditionHolds(ns: string[], c: MatchCondition): boolean {
  if (c.path.length > ns.length) return false;
  const part = c.matchType === 'prefix' ? ns.slice(0, c.path.length) : ns.slice(ns.length - c.path.length);
  return c.path.every((p, i) => p === '*' || p === part[i]);
}

function withoutProvenance(v: Record<string, unknown>): Record<string, unknown> {
  const { _provenance: _, ...rest } = v;
  return rest;
}

// matches applies a LangGraph filter to a value: equality, or the
// operators $eq, $ne, $gt, $gte, $lt, $lte.
function matches(value: Record<string, unknown>, filter?: Record<string, unknown>): boolean {
  if (!filter) return true;
  return Object.entries(filter).every(([k, want]) => {
    const have = value[k];
    if (want && typeof want === 'object' && !Array.isArray(want) && Object.keys(want).every((o) => o.startsWith('$'))) {
      return Object.entries(want as Record<string, unknown>).every(([o, x]) => compare(have, o, x));
    }
    return JSON.stringify(have) === JSON.stringify(want);
  });
}

function compare(have: unknown, op: string, x: unknown): boolean {
  switch (op) {
    case '$eq': return JSON.stringify(have) === JSON.stringify(x);
    case '$ne': return JSON.stringify(have) !== JSON.stringify(x);
    case '$gt': return (have as number) > (x as number);
    case '$gte': return (have as number) >= (x as number);
    case '$lt': return (have as number) < (x as number);
    case '$lte': return (have as number) <= (x as number);
    default: throw new Error(`CustodyStore: unknown filter operator ${op}`);
  }
}

// @custody/langgraph: a LangGraph.js BaseStore on custody that answers as
// LangGraph's InMemoryStore does, except where docs/clients/langgraph.md
// lists a difference and its reason. Each put is a candidate memory on the
// channel the store is configured with, so custody's admission decides
// what becomes memory; a write it holds throws HeldWriteError.
//
// A namespace tuple ["memories", "u1"] is the custody namespace
// <root>/memories/u1 (a label that is not a custody segment is hashed);
// the record's body is the value as JSON, and its metadata says which
// item it is (encoding.ts). A deletion is a new version of the record
// marked deleted.

import {
  BaseStore, InvalidNamespaceError, validateNamespace, type GetOperation, type Item, type ListNamespacesOperation,
  type Operation, type OperationResults, type PutOperation, type SearchItem, type SearchOperation,
} from '@langchain/langgraph-checkpoint';
import type { CustodyClient, Decision, MemoryClass, MemoryRecord, SearchMode } from '@custody/client';
import {
  custodyKey, decodeValue, encodeValue, MAX_LABELS, marksOf, META, metadataOf, segment, type Marks,
} from './encoding.js';
import { HeldWriteError, type HeldWrite } from './errors.js';
import { conditionHolds, matches, startsWith } from './filter.js';

export { HeldWriteError, type HeldWrite } from './errors.js';
export { META } from './encoding.js';

export interface CustodyStoreOptions {
  /** The client, acting as the principal whose channel the puts are written on. */
  client: CustodyClient;
  /** The channel of every put; the principal must be registered with it. */
  channel: string;
  /** The custody namespace under which the store's namespaces live (default "langgraph"); stores with different roots share nothing. */
  root?: string;
  /** The class of every put (default "fact"). */
  class?: MemoryClass;
  /** The custody session the puts come from (for an agent channel). */
  session?: string;
  /** The subject to act for (an agent principal must name it; default the client's). */
  subject?: string;
  /** Records expire this many minutes after a put (custody's expires_at). */
  ttlMinutes?: number;
  /** How a query search ranks: lexical (the words of the values, the default), semantic or hybrid (custody's search modes). */
  searchMode?: SearchMode;
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

/** An item of the store: LangGraph's Item, and where its value came from. */
export interface CustodyItem extends Item {
  provenance: Provenance;
}

/** The most a query search ranks (custody's search limit). */
export const MAX_QUERY_RESULTS = 100;
const PAGE = 500;
const BATCH = 1000;

interface Loaded {
  record: MemoryRecord;
  marks: Marks;
}

export class CustodyStore extends BaseStore {
  private readonly o: Required<Pick<CustodyStoreOptions, 'root' | 'class'>> & CustodyStoreOptions;

  constructor(opts: CustodyStoreOptions) {
    super();
    this.o = { root: 'langgraph', class: 'fact', searchMode: 'lexical', ...opts };
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(this.o.root)) {
      throw new Error(`CustodyStore: root ${JSON.stringify(this.o.root)} is not a custody namespace segment; give 1 to 64 of A-Z a-z 0-9 _ . -`);
    }
  }

  /** The custody namespace of a tuple (or of a search prefix). */
  custodyNamespace(ns: string[]): string {
    return [this.o.root, ...ns.map(segment)].join('/');
  }

  /** The custody key of an item's key. */
  custodyKey(key: string): string {
    return custodyKey(key);
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    // As InMemoryStore: every namespace is checked before anything is done,
    // reads see the store as it was before the batch, and the puts are made
    // last, one per item (the last put of an item wins), answering null.
    for (const op of operations) {
      if ('namespace' in op) validateLabels(op.namespace);
      else if ('namespacePrefix' in op && op.namespacePrefix.length > 0) validateLabels(op.namespacePrefix);
    }
    const puts = new Map<string, PutOperation>();
    const reads: Promise<unknown>[] = [];
    for (const op of operations) {
      if ('value' in op) {
        puts.set(JSON.stringify([op.namespace, op.key]), op as PutOperation);
        reads.push(Promise.resolve(null));
      } else if ('key' in op) reads.push(this.doGet(op as GetOperation));
      else if ('namespacePrefix' in op) reads.push(this.doSearch(op as SearchOperation));
      else reads.push(this.doListNamespaces(op as ListNamespacesOperation));
    }
    const results = await Promise.all(reads);
    const held = await this.doPuts([...puts.values()]);
    if (held.length > 0) throw new HeldWriteError(held, results);
    return results as OperationResults<Op>;
  }

  private sub() {
    return { subject: this.o.subject };
  }

  private item(r: MemoryRecord, k: Marks): CustodyItem {
    const provenance: Provenance = {
      id: r.id, channel: r.channel, authority: r.authority, writer: r.writer, source_ref: r.source_ref,
      state: r.state, log_index: r.log_index, created_at: r.created_at,
    };
    return {
      namespace: k.namespace, key: k.key, value: decodeValue(r.body, k.tagged) as Record<string, unknown>,
      createdAt: new Date(k.created ?? r.created_at), updatedAt: new Date(r.created_at), provenance,
    };
  }

  /** The newest version of an item's record (live or deleted), or null. */
  private async head(ns: string[], key: string): Promise<Loaded | null> {
    if (ns.length > MAX_LABELS) return null;
    const page = await this.o.client.list({
      namespace: this.custodyNamespace(ns), key: custodyKey(key), metadata: { [META.root]: this.o.root }, ...this.sub(),
    });
    for (const record of page.items) {
      const marks = marksOf(record, this.o.root);
      if (marks && marks.key === key && sameTuple(marks.namespace, ns)) return { record, marks };
    }
    return null;
  }

  private async doGet(op: GetOperation): Promise<Item | null> {
    const h = await this.head(op.namespace, op.key);
    return h && h.marks.live ? this.item(h.record, h.marks) : null;
  }

  private async doPuts(ops: PutOperation[]): Promise<HeldWrite[]> {
    for (const op of ops) {
      if (op.namespace.length > MAX_LABELS) {
        throw new InvalidNamespaceError(`CustodyStore: a namespace has at most ${MAX_LABELS} labels in custody, not ${op.namespace.length}: ${JSON.stringify(op.namespace)}`);
      }
    }
    const heads = await Promise.all(ops.map((op) => this.head(op.namespace, op.key)));
    const expires = this.o.ttlMinutes ? new Date(Date.now() + this.o.ttlMinutes * 60_000).toISOString() : undefined;
    const writes: { op: PutOperation; body: string; metadata: Record<string, string> }[] = [];
    ops.forEach((op, i) => {
      const h = heads[i];
      const first = h ? (h.marks.first ?? h.record.log_index) : undefined;
      if (op.value === null) {
        if (h && !h.marks.live) return; // already deleted: nothing changes
        writes.push({ op, body: 'null', metadata: metadataOf(this.o.root, { namespace: op.namespace, key: op.key, live: false, first, tagged: false }) });
        return;
      }
      const { body, tagged } = encodeValue(op.value);
      const live = h?.marks.live ? h : null;
      const marks: Marks = {
        namespace: op.namespace, key: op.key, live: true, first, tagged,
        created: live ? (live.marks.created ?? live.record.created_at) : undefined,
        since: live ? (live.marks.since ?? live.record.log_index) : undefined,
      };
      writes.push({ op, body, metadata: metadataOf(this.o.root, marks) });
    });
    const held: HeldWrite[] = [];
    for (let i = 0; i < writes.length; i += BATCH) {
      const chunk = writes.slice(i, i + BATCH);
      const decisions = await this.o.client.rememberBatch(chunk.map((w) => ({
        namespace: this.custodyNamespace(w.op.namespace), key: custodyKey(w.op.key), class: this.o.class, body: w.body,
        channel: this.o.channel, session: this.o.session, expires_at: expires, source_ref: `langgraph:${this.o.root}`, metadata: w.metadata,
      })), this.sub());
      decisions.forEach((d, j) => {
        const { op } = chunk[j];
        this.o.onDecision?.(d, { namespace: op.namespace, key: op.key });
        if (d.state !== 'admitted') held.push({ namespace: op.namespace, key: op.key, deletion: op.value === null, decision: d });
      });
    }
    return held;
  }

  /** Every record of the store under a namespace prefix, live or deleted. */
  private async load(prefix: string[]): Promise<Loaded[]> {
    const out: Loaded[] = [];
    if (prefix.length > MAX_LABELS) return out;
    for await (const record of this.o.client.memories({
      namespacePrefix: this.custodyNamespace(prefix), metadata: { [META.root]: this.o.root }, pageSize: PAGE, ...this.sub(),
    })) {
      const marks = marksOf(record, this.o.root);
      if (marks && startsWith(marks.namespace, prefix)) out.push({ record, marks });
    }
    return out;
  }

  private async doSearch(op: SearchOperation): Promise<SearchItem[]> {
    const offset = op.offset ?? 0;
    const limit = op.limit ?? 10;
    if (op.query) return this.querySearch(op, offset, limit);
    // InMemoryStore's order: namespaces as they first appeared (a deletion
    // counts), items in a namespace as they were created.
    const all = await this.load(op.namespacePrefix);
    const nsFirst = new Map<string, number>();
    for (const { record, marks } of all) {
      const ns = JSON.stringify(marks.namespace);
      const first = marks.first ?? record.log_index;
      nsFirst.set(ns, Math.min(nsFirst.get(ns) ?? Infinity, first));
    }
    const order = (l: Loaded) => [nsFirst.get(JSON.stringify(l.marks.namespace))!, l.marks.since ?? l.record.log_index];
    const live = all.filter((l) => l.marks.live).sort((a, b) => {
      const [x, y] = [order(a), order(b)];
      return x[0] - y[0] || x[1] - y[1];
    });
    const items = live.map((l) => this.item(l.record, l.marks)).filter((it) => matches(it.value, op.filter));
    return items.slice(offset, offset + limit).map((it) => ({ ...it, score: undefined }));
  }

  // A query search is custody's search, restricted inside the query to the
  // live items of this store's root under the prefix: nothing else can
  // take a place in its results.
  private async querySearch(op: SearchOperation, offset: number, limit: number): Promise<SearchItem[]> {
    if (op.namespacePrefix.length > MAX_LABELS) return [];
    const want = op.filter ? MAX_QUERY_RESULTS : Math.min(MAX_QUERY_RESULTS, offset + limit);
    const res = await this.o.client.searchRanked({
      query: op.query!, namespacePrefix: this.custodyNamespace(op.namespacePrefix), limit: want, mode: this.o.searchMode,
      metadata: { [META.root]: this.o.root, [META.live]: '1' }, ...this.sub(),
    });
    const items: SearchItem[] = [];
    for (const h of res.items) {
      const marks = marksOf(h, this.o.root);
      if (!marks || !marks.live || !startsWith(marks.namespace, op.namespacePrefix)) continue;
      const it = this.item(h, marks);
      if (matches(it.value, op.filter)) items.push({ ...it, score: h.score });
    }
    return items.slice(offset, offset + limit);
  }

  private async doListNamespaces(op: ListNamespacesOperation): Promise<string[][]> {
    const seen = new Map<string, string[]>();
    for (const { marks } of await this.load([])) {
      if (!(op.matchConditions ?? []).every((c) => conditionHolds(marks.namespace, c))) continue;
      // as InMemoryStore: a tuple cut to maxDepth labels is joined with ':' and split again, so that
      // maxDepth 0 gives [""]
      const ns = op.maxDepth !== undefined ? marks.namespace.slice(0, op.maxDepth).join(':').split(':') : marks.namespace;
      seen.set(ns.join(':'), ns);
    }
    const all = [...seen.values()].sort((a, b) => a.join(':').localeCompare(b.join(':')));
    const offset = op.offset ?? 0;
    return all.slice(offset, offset + (op.limit ?? all.length));
  }
}

// validateLabels checks a namespace as InMemoryStore does: LangGraph's
// rules, and no ':' in a label.
function validateLabels(ns: string[]): void {
  validateNamespace(ns, { allowReservedRoot: true });
  if (ns.some((label) => label.includes(':'))) {
    throw new InvalidNamespaceError("Namespace labels cannot contain colons (':'), the InMemoryStore path separator.");
  }
}

function sameTuple(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((s, i) => s === b[i]);
}

// Running the same BaseStore calls on CustodyStore and on LangGraph's
// InMemoryStore, and comparing what they answer. What the adapter's doc
// lists as deliberate differences is taken out before comparing: an
// item's provenance, and its times (the server's, not the process's),
// which are compared by their own rule instead.

import assert from 'node:assert/strict';
import type { BaseStore, Item, Operation } from '@langchain/langgraph-checkpoint';

/** One call of the BaseStore interface. */
export type Call =
  | { op: 'put'; namespace: string[]; key: string; value: unknown }
  | { op: 'delete'; namespace: string[]; key: string }
  | { op: 'get'; namespace: string[]; key: string }
  | { op: 'search'; prefix: string[]; filter?: Record<string, unknown>; limit?: number; offset?: number }
  | { op: 'list'; prefix?: string[]; suffix?: string[]; maxDepth?: number; limit?: number; offset?: number }
  | { op: 'batch'; ops: Operation[] };

export async function run(store: BaseStore, c: Call): Promise<unknown> {
  switch (c.op) {
    case 'put': return store.put(c.namespace, c.key, c.value as Record<string, unknown>);
    case 'delete': return store.delete(c.namespace, c.key);
    case 'get': return store.get(c.namespace, c.key);
    case 'search': return store.search(c.prefix, { filter: c.filter, limit: c.limit, offset: c.offset });
    case 'list': return store.listNamespaces({ prefix: c.prefix, suffix: c.suffix, maxDepth: c.maxDepth, limit: c.limit, offset: c.offset });
    case 'batch': return store.batch(c.ops);
  }
}

/** An answer, or the error it threw (its class and message). */
export async function answer(store: BaseStore, c: Call): Promise<{ ok: unknown } | { error: string }> {
  try {
    return { ok: await run(store, c) };
  } catch (e) {
    const err = e as Error;
    return { error: `${err.name}: ${err.message}` };
  }
}

function isItem(v: unknown): v is Item {
  return !!v && typeof v === 'object' && 'namespace' in v && 'key' in v && 'value' in v && 'createdAt' in v;
}

/**
 * Times are checked by rule, per store: an item's createdAt stays what it
 * was while the item lives (across updates), and updatedAt is never before
 * it. Then items are compared without times and provenance.
 */
export class Times {
  private readonly created = new Map<string, number>();

  forget(namespace: string[], key: string) {
    this.created.delete(JSON.stringify([namespace, key]));
  }

  check(v: unknown, where: string): unknown {
    if (Array.isArray(v)) return v.map((x) => this.check(x, where));
    if (!isItem(v)) return v;
    const id = JSON.stringify([v.namespace, v.key]);
    const at = v.createdAt.getTime();
    assert.ok(v.updatedAt.getTime() >= at, `${where}: ${id} updatedAt ${v.updatedAt.toISOString()} is before createdAt ${v.createdAt.toISOString()}`);
    const was = this.created.get(id);
    if (was !== undefined) assert.equal(at, was, `${where}: ${id} createdAt changed from ${new Date(was).toISOString()} to ${v.createdAt.toISOString()} while the item lived`);
    else this.created.set(id, at);
    const { createdAt: _c, updatedAt: _u, provenance: _p, ...rest } = v as Item & { provenance?: unknown };
    return rest;
  }
}

/** The calls that end an item's life, so its createdAt may start again. */
export function deletions(c: Call): [string[], string][] {
  if (c.op === 'delete') return [[c.namespace, c.key]];
  if (c.op === 'put' && c.value === null) return [[c.namespace, c.key]];
  if (c.op === 'batch') {
    return c.ops.filter((o) => 'value' in o && o.value === null).map((o) => [(o as { namespace: string[] }).namespace, (o as { key: string }).key]);
  }
  return [];
}

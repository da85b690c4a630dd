// The filters of LangGraph's InMemoryStore, word for word, so that the
// same search and listNamespaces keep the same items: equality is ===
// (an array or an object in a filter never equals a stored one), and the
// operators are $eq, $ne, $gt, $gte, $lt, $lte (compared as numbers),
// $in and $nin.

import type { MatchCondition } from '@langchain/langgraph-checkpoint';

const OPERATORS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin']);

function isOperators(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && Object.keys(v).every((k) => OPERATORS.has(k));
}

function compareValues(have: unknown, want: unknown): boolean {
  if (!isOperators(want)) return have === want;
  return Object.keys(want).every((op) => {
    const x = want[op];
    switch (op) {
      case '$eq': return have === x;
      case '$ne': return have !== x;
      case '$gt': return Number(have) > Number(x);
      case '$gte': return Number(have) >= Number(x);
      case '$lt': return Number(have) < Number(x);
      case '$lte': return Number(have) <= Number(x);
      case '$in': return Array.isArray(x) ? x.includes(have) : false;
      case '$nin': return Array.isArray(x) ? !x.includes(have) : true;
      default: return false;
    }
  });
}

/** Whether a value passes a search filter. */
export function matches(value: unknown, filter?: Record<string, unknown>): boolean {
  if (!filter) return true;
  return Object.entries(filter).every(([k, want]) => compareValues((value as Record<string, unknown>)[k], want));
}

/** Whether a namespace meets a listNamespaces condition ('*' matches any label). */
export function conditionHolds(ns: string[], c: MatchCondition): boolean {
  if (c.path.length > ns.length) return false;
  const part = c.matchType === 'prefix' ? ns.slice(0, c.path.length) : ns.slice(ns.length - c.path.length);
  return c.path.every((p, i) => p === '*' || p === part[i]);
}

export function startsWith(ns: string[], prefix: string[]): boolean {
  return prefix.length <= ns.length && prefix.every((s, i) => s === ns[i]);
}

import type { Decision } from '@custody/client';

/** A put or delete that custody's admission did not put in force. */
export interface HeldWrite {
  namespace: string[];
  key: string;
  /** true for a delete (a put of null). */
  deletion: boolean;
  /** custody's decision: its state (quarantined, pending_confirmation, pending, rejected), reason and receipt. */
  decision: Decision;
}

/**
 * Thrown by put, delete and batch when admission held a write: the item
 * keeps its previous value (or stays absent) until a reviewer approves the
 * write or its owner confirms it. The other writes of the same batch were
 * made; `results` holds what the batch answered.
 */
export class HeldWriteError extends Error {
  readonly held: HeldWrite[];
  readonly results: unknown[];

  constructor(held: HeldWrite[], results: unknown[]) {
    const first = held[0];
    const what = (h: HeldWrite) => `${h.deletion ? 'delete of' : 'put of'} ${JSON.stringify(h.namespace)} ${JSON.stringify(h.key)}`;
    super(`custody held ${held.length === 1 ? 'a write' : `${held.length} writes`}: ${what(first)} is ${first.decision.state} (${first.decision.reason})` +
      `${held.length > 1 ? ` and ${held.length - 1} more` : ''}; it is not in force until a reviewer approves it (custody review) or the owner confirms it (the console's owner page, /console#mine, or POST /v1/memories/{id}/confirm)`);
    this.name = 'HeldWriteError';
    this.held = held;
    this.results = results;
  }
}

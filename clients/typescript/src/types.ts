// The API's types, named from the generated OpenAPI schemas (openapi.ts,
// regenerated with `npm run generate` from the server's /v1/openapi.json).

import type { components } from './openapi.js';

type S = components['schemas'];

export type MemoryRecord = S['Record'];
export type ScoredRecord = S['Scored'];
export type ReviewItem = S['ReviewItem'];
export type Decision = S['Decision'];
export type GateDecision = S['GateDecision'];
export type SessionInfo = S['Session'];
export type Lineage = S['Lineage'];
export type LogEntry = S['LogEntry'];
export type InclusionProof = S['InclusionProofResponse'];
export type ConsistencyProof = S['ConsistencyProofResponse'];
export type Policy = S['PolicyResponse'];
export type PolicyChange = S['PolicyChangeResponse'];
export type MemoryRequest = S['MemoryRequest'];
export type SearchRequest = S['SearchRequest'];
export type GateRequest = S['GateRequest'];
export type Edge = S['Edge'];
export type MemoryClass = MemoryRequest['class'];

/** One page of a list answer. */
export interface Page<T> {
  items: T[];
  nextCursor: string;
}

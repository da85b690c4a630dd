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
export type Impact = S['Impact'];
export type LogEntry = S['LogEntry'];
export type InclusionProof = S['InclusionProofResponse'];
export type ConsistencyProof = S['ConsistencyProofResponse'];
export type Policy = S['PolicyResponse'];
export type PolicyChange = S['PolicyChangeResponse'];
export type MemoryRequest = S['MemoryRequest'];
export type SearchRequest = S['SearchRequest'];
export type GateRequest = S['GateRequest'];
export type Edge = S['Edge'];
export type PrincipalInfo = S['PrincipalInfo'];
export type PrincipalUpdate = S['PrincipalUpdateRequest'];
export type Rotated = S['RotateResponse'];
export type Pause = S['Pause'];
export type PauseRequest = S['PauseRequest'];
export type ErasureReceipt = S['ErasureReceipt'];
export type ErasedRecord = S['ErasedRecord'];
export type LogStatus = S['LogStatusResponse'];
export type VerifyStatus = S['VerifyStatus'];
export type MemoryClass = MemoryRequest['class'];

/** One page of a list answer. */
export interface Page<T> {
  items: T[];
  nextCursor: string;
}

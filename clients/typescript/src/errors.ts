// Errors of the custody API, one class per kind of answer. Every error
// answer of the server is {"error": {"code", "message", "field"?}};
// CustodyError carries those and the HTTP status.

import type { GateDecision } from './types.js';

export class CustodyError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field: string = '',
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** 400: malformed or invalid input (invalid_input, invalid_json, unknown_field). */
export class InvalidInputError extends CustodyError {}
/** 401: no or unknown bearer token. */
export class UnauthenticatedError extends CustodyError {}
/** 403: a channel or role the principal does not hold. */
export class ForbiddenError extends CustodyError {}
/** 403 subject_not_allowed: the subject named is not the caller's to act for. */
export class SubjectNotAllowedError extends ForbiddenError {}
/** 404: absent, or not visible to the caller (the two are indistinguishable). */
export class NotFoundError extends CustodyError {}
/** 409: e.g. confirming a record that is not pending. */
export class ConflictError extends CustodyError {}
/** 413: the body is over the server's limit. */
export class BodyTooLargeError extends CustodyError {}
/** 429: retry after retryAfter seconds. */
export class RateLimitedError extends CustodyError {}
/** 503: the store cannot be reached right now. */
export class UnavailableError extends CustodyError {}
/** 503 admission_undecidable: the candidate is kept as pending. */
export class AdmissionUndecidableError extends UnavailableError {}

/** The gate did not allow a wrapped tool's call, so the tool did not run. */
export class GateRefusedError extends Error {
  constructor(
    readonly action: string,
    readonly decision: GateDecision,
  ) {
    super(`the gate answered ${decision.decision} for ${action}: ${(decision.reasons ?? []).join('; ')}`);
    this.name = 'GateRefusedError';
  }
}

type ErrorClass = new (status: number, code: string, message: string, field?: string, retryAfter?: number) => CustodyError;

const byStatus: Record<number, ErrorClass> = {
  400: InvalidInputError,
  401: UnauthenticatedError,
  403: ForbiddenError,
  404: NotFoundError,
  409: ConflictError,
  413: BodyTooLargeError,
  429: RateLimitedError,
  503: UnavailableError,
};

const byCode: Record<string, ErrorClass> = {
  subject_not_allowed: SubjectNotAllowedError,
  admission_undecidable: AdmissionUndecidableError,
};

/** The typed error of an answer with this status and decoded body. */
export function errorFrom(status: number, body: unknown, retryAfter?: string | null): CustodyError {
  const detail = (body as { error?: { code?: string; message?: string; field?: string } } | null)?.error;
  const code = detail?.code ?? '';
  const message = detail?.message ?? `HTTP ${status} without a custody error body`;
  const Cls = byCode[code] ?? byStatus[status] ?? CustodyError;
  const ra = retryAfter && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined;
  return new Cls(status, code, message, detail?.field ?? '', ra);
}

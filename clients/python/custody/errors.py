"""Errors of the custody API, one class per kind of answer.

Every error answer of the server is {"error": {"code", "message", "field"?}};
CustodyError carries those and the HTTP status.
"""

from __future__ import annotations

from typing import Any, Dict, Optional


class CustodyError(Exception):
    """An error answer of the server (or a transport failure, status 0)."""

    def __init__(self, status: int, code: str, message: str, field: str = "",
                 retry_after: Optional[int] = None):
        super().__init__(f"{code}: {message}" if code else message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.retry_after = retry_after


class InvalidInput(CustodyError):
    """400: malformed or invalid input (codes invalid_input, invalid_json, unknown_field)."""


class Unauthenticated(CustodyError):
    """401: no or unknown bearer token."""


class Forbidden(CustodyError):
    """403: a channel or role the principal does not hold."""


class SubjectNotAllowed(Forbidden):
    """403 subject_not_allowed: the subject named is not the caller's to act for."""


class NotFound(CustodyError):
    """404: absent, or not visible to the caller (the two are indistinguishable)."""


class Conflict(CustodyError):
    """409: e.g. confirming a record that is not pending."""


class BodyTooLarge(CustodyError):
    """413: the request body is over the server's limit."""


class RateLimited(CustodyError):
    """429: retry after .retry_after seconds."""


class Unavailable(CustodyError):
    """503: the store cannot be reached right now."""


class AdmissionUndecidable(Unavailable):
    """503 admission_undecidable: the candidate is kept as pending."""


class GateRefused(Exception):
    """The action gate did not allow a tool call, so the tool did not run.

    .decision is the gate's answer (a GateDecision): "deny" or "confirm",
    with its reasons and the offending sources.
    """

    def __init__(self, action: str, decision: Any):
        reasons = "; ".join(getattr(decision, "reasons", []) or [])
        super().__init__(f"the gate answered {decision.decision} for {action}: {reasons}")
        self.action = action
        self.decision = decision


_BY_STATUS = {
    400: InvalidInput,
    401: Unauthenticated,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: BodyTooLarge,
    429: RateLimited,
    503: Unavailable,
}

_BY_CODE = {
    "subject_not_allowed": SubjectNotAllowed,
    "admission_undecidable": AdmissionUndecidable,
}


def error_from(status: int, body: Optional[Dict[str, Any]], retry_after: Optional[str] = None) -> CustodyError:
    """The typed error of an answer with this status and decoded body."""
    detail = (body or {}).get("error") if isinstance(body, dict) else None
    if not isinstance(detail, dict):
        detail = {"code": "", "message": f"HTTP {status} without a custody error body"}
    code = str(detail.get("code", ""))
    cls = _BY_CODE.get(code) or _BY_STATUS.get(status) or CustodyError
    ra = int(retry_after) if retry_after and retry_after.isdigit() else None
    return cls(status, code, str(detail.get("message", "")), str(detail.get("field", "") or ""), ra)

"""Typed answers of the custody API.

Each dataclass keeps the fields clients rely on (design §6) and the whole
decoded object in .raw, so fields the server adds later stay reachable.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Dict, List, Optional


def _build(cls, d: Dict[str, Any]):
    names = {f.name for f in fields(cls)} - {"raw"}
    obj = cls(**{k: v for k, v in d.items() if k in names})
    obj.raw = d
    return obj


@dataclass
class Edge:
    id: str
    weight: float = 1.0


@dataclass
class Record:
    """An eligible memory with its provenance."""

    id: str
    owner: str = ""
    namespace: str = ""
    key: str = ""
    class_: str = ""
    body: str = ""
    channel: str = ""
    writer: str = ""
    source_ref: str = ""
    authority: str = ""
    audience: str = ""
    state: str = ""
    created_at: str = ""
    expires_at: Optional[str] = None
    version: int = 0
    log_index: int = 0
    parents: List[Dict[str, Any]] = field(default_factory=list)
    receipt: Optional[Dict[str, Any]] = None
    metadata: Dict[str, str] = field(default_factory=dict)
    score: Optional[float] = None
    # lists names the search lists that found a search hit: "lexical", "semantic" or both.
    lists: List[str] = field(default_factory=list)
    proposed: Optional[Dict[str, Any]] = None
    # withheld: the body is left out (the caller may not read it, or, in a history, it is not in force).
    withheld: bool = False
    # superseded_by, in a history: the version that replaced this admitted one, which is not in force.
    superseded_by: Optional[int] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Record":
        d2 = dict(d)
        if "class" in d2:
            d2["class_"] = d2.pop("class")
        r = _build(cls, d2)
        r.raw = d
        return r


@dataclass
class Decision:
    """The admission decision on a candidate."""

    id: str
    state: str
    authority: str = ""
    reason: str = ""
    receipt: Optional[Dict[str, Any]] = None
    log_index: int = 0
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def admitted(self) -> bool:
        return self.state == "admitted"

    @property
    def held(self) -> bool:
        """True when the candidate is not in force: quarantined, pending or rejected."""
        return self.state != "admitted"

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Decision":
        return _build(cls, d)


@dataclass
class GateDecision:
    """The action gate's answer: allow, confirm or deny."""

    decision: str
    risk: str = ""
    required: str = ""
    observed: str = ""
    reasons: List[str] = field(default_factory=list)
    offending: List[str] = field(default_factory=list)
    confirm_digest: str = ""
    log_index: int = 0
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def allowed(self) -> bool:
        return self.decision == "allow"

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "GateDecision":
        return _build(cls, d)


@dataclass
class SessionInfo:
    """A session as the server reports it."""

    id: str
    subject: str = ""
    opened_by: str = ""
    created_at: str = ""
    floor: str = ""
    observed_external: bool = False
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "SessionInfo":
        return _build(cls, d)


@dataclass
class Page:
    """One page of a list answer: records, or namespace names for namespaces()."""

    items: List[Any]
    next_cursor: str = ""


@dataclass
class Principal:
    """A principal of the tenant, as an admin sees it (no token, only its public key)."""

    name: str
    tenant: str = ""
    roles: List[str] = field(default_factory=list)
    channels: List[str] = field(default_factory=list)
    groups: List[str] = field(default_factory=list)
    status: str = ""
    public_key: str = ""
    created_at: str = ""
    log_index: int = 0
    problem: str = ""
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Principal":
        d2 = {k: (v if v is not None else []) if k in ("roles", "channels", "groups") else v for k, v in d.items()}
        p = _build(cls, d2)
        p.raw = d
        return p


@dataclass
class Rotated:
    """The answer of a token rotation: the principal and its new token (shown once)."""

    principal: Principal
    token: str


@dataclass
class Pause:
    """A pause of a writer's or a channel's writes: held for review while active."""

    id: str
    tenant: str = ""
    writer: str = ""
    channel: str = ""
    reason: str = ""
    by: str = ""
    created_at: str = ""
    until: Optional[str] = None
    resumed_at: Optional[str] = None
    resumed_by: str = ""
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Pause":
        return _build(cls, d)


@dataclass
class ErasureReceipt:
    """The receipt of a subject's erasure: what was erased, what was suspended."""

    subject: str
    tenant: str = ""
    by: str = ""
    erased: List[Dict[str, Any]] = field(default_factory=list)
    already_erased: int = 0
    suspended: List[str] = field(default_factory=list)
    log_index: int = 0
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "ErasureReceipt":
        d2 = {k: (v if v is not None else []) if k in ("erased", "suspended") else v for k, v in d.items()}
        r = _build(cls, d2)
        r.raw = d
        return r


@dataclass
class LogStatus:
    """The caller's tenant's log: its signed checkpoint, size, origin, verifier key and last
    custody verify (or None)."""

    checkpoint: str
    size: int = 0
    origin: str = ""
    verifier_key: str = ""
    last_verify: Optional[Dict[str, Any]] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "LogStatus":
        return _build(cls, d)


class SearchResults(list):
    """The records of a search, best first, with the mode that ranked them
    (lexical, semantic or hybrid) and, when a semantic or hybrid search was
    answered lexically, why (fallback)."""

    def __init__(self, items: List[Record], mode: str = "", fallback: str = ""):
        super().__init__(items)
        self.mode = mode
        self.fallback = fallback

"""custody: the Python client of custody's HTTP API (standard library only; the log pin,
custody.Pin, needs the verify extra: pip install 'custody[verify]').

    from custody import Client
    c = Client("http://127.0.0.1:8080", token)
    c.remember("prefs", "short answers", "preference", "user", key="tone")
    for r in c.search("answers"):
        print(r.body, r.authority, r.channel)
"""

__version__ = "0.1.0"

from .client import Client
from .errors import (AdmissionUndecidable, BodyTooLarge, Conflict, CustodyError, Forbidden, GateRefused,
                     InvalidInput, NotFound, RateLimited, SubjectNotAllowed, Unauthenticated, Unavailable)
from .harness import Session, wrap_tool
from .pin import (DEFAULT_MAX_AGE, BadCheckpoint, Checkpoint, LogInconsistent, MissingVerifyDependency, NotWitnessed,
                  Pin, PinError, WitnessPolicy, verify_consistency)
from .types import (Decision, Edge, ErasureReceipt, GateDecision, LogStatus, Page, Pause, Principal, Record, Rotated,
                    SearchResults, SessionInfo)

__all__ = [
    "__version__", "Client", "Session", "wrap_tool",
    "Record", "SearchResults", "Decision", "GateDecision", "SessionInfo", "Page", "Edge",
    "Principal", "Rotated", "Pause", "ErasureReceipt", "LogStatus",
    "CustodyError", "InvalidInput", "Unauthenticated", "Forbidden", "SubjectNotAllowed", "NotFound",
    "Conflict", "BodyTooLarge", "RateLimited", "Unavailable", "AdmissionUndecidable", "GateRefused",
    "Pin", "Checkpoint", "WitnessPolicy", "verify_consistency", "DEFAULT_MAX_AGE",
    "PinError", "BadCheckpoint", "NotWitnessed", "LogInconsistent", "MissingVerifyDependency",
]

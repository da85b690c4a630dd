"""The HTTP client: one method per route of custody's API (design §6)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Iterator, List, Optional, Sequence

from .errors import CustodyError, error_from
from .types import Decision, ErasureReceipt, GateDecision, LogStatus, Page, Pause, Principal, Record, Rotated, SearchResults, SessionInfo

_UNSET = object()

# The longest a rate-limited request waits before it is sent again.
_MAX_RETRY_WAIT = 30.0


def _retry_wait(retry_after: Optional[str]) -> float:
    """Seconds to wait before sending again a request answered 429 with this Retry-After (1 when absent or unreadable)."""
    try:
        s = float(retry_after) if retry_after is not None else -1.0
    except ValueError:
        s = -1.0
    if s < 0 or s != s:
        return 1.0
    return min(s, _MAX_RETRY_WAIT)


class Client:
    """A client of one custody server, acting as the principal of token.

    subject is the user to act for; an agent principal must name it (it is
    then sent on every call), a user principal may leave it out.

    rate_limit_retries is how many times a request answered 429 is sent
    again, each after the Retry-After the server gave (at most 30
    seconds). custody answers 429 when the principal is over its rate,
    before it does anything with the request, so sending it again is safe.
    0 raises RateLimited at the first 429.
    """

    def __init__(self, base_url: str, token: str, subject: Optional[str] = None, timeout: float = 30.0,
                 rate_limit_retries: int = 2):
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.subject = subject
        self.timeout = timeout
        self.rate_limit_retries = max(0, int(rate_limit_retries))

    # -- transport -------------------------------------------------------

    def _request(self, method: str, path: str, query: Optional[Dict[str, Any]] = None,
                 body: Any = _UNSET, text: Optional[str] = None, raw: bool = False, auth: bool = True) -> Any:
        q = {k: v for k, v in (query or {}).items() if v is not None and v != ""}
        url = self.base_url + path + ("?" + urllib.parse.urlencode(q) if q else "")
        headers = {"Accept": "application/json"}
        if auth:
            headers["Authorization"] = f"Bearer {self.token}"
        data = None
        if text is not None:
            data = text.encode("utf-8")
            headers["Content-Type"] = "text/plain; charset=utf-8"
        elif body is not _UNSET:
            data = json.dumps({k: v for k, v in body.items() if v is not None}).encode("utf-8")
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        attempt = 0
        while True:
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    return self._decoded(resp.read(), raw)
            except urllib.error.HTTPError as e:
                if e.code == 429 and attempt < self.rate_limit_retries:
                    e.read()
                    attempt += 1
                    time.sleep(_retry_wait(e.headers.get("Retry-After")))
                    continue
                self._raise(e)
            except urllib.error.URLError as e:
                raise CustodyError(0, "unreachable", f"cannot reach {self.base_url}: {e.reason}; is custody serve running?") from None

    @staticmethod
    def _decoded(payload: bytes, raw: bool) -> Any:
        if raw:
            return payload.decode("utf-8")
        return json.loads(payload) if payload else None

    @staticmethod
    def _raise(e: urllib.error.HTTPError) -> None:
        """Raises the typed error of an error answer."""
        payload = e.read()
        try:
            decoded = json.loads(payload)
        except ValueError:
            decoded = None
        raise error_from(e.code, decoded, e.headers.get("Retry-After")) from None

    def _subject(self, subject: Optional[str]) -> Optional[str]:
        return subject if subject is not None else self.subject

    def _id(self, id: str) -> str:
        return urllib.parse.quote(id, safe="")

    # -- memories --------------------------------------------------------

    def remember(self, namespace: str, body: str, class_: str = "fact", channel: str = "user", *,
                 key: Optional[str] = None, audience: Optional[str] = None, expires_at: Optional[str] = None,
                 session: Optional[str] = None, derived_from: Optional[Sequence[Dict[str, Any]]] = None,
                 source_ref: Optional[str] = None, subject: Optional[str] = None,
                 metadata: Optional[Dict[str, str]] = None) -> Decision:
        """Submit a candidate; the answer says whether it was admitted or held.
        metadata is optional plain data kept with the record (string values;
        never a control field)."""
        d = self._request("POST", "/v1/memories", body={
            "namespace": namespace, "key": key, "class": class_, "body": body, "channel": channel,
            "subject": self._subject(subject), "audience": audience, "expires_at": expires_at,
            "session": session, "derived_from": list(derived_from) if derived_from else None,
            "source_ref": source_ref, "metadata": dict(metadata) if metadata else None,
        })
        return Decision.from_dict(d)

    def remember_batch(self, items: Sequence[Dict[str, Any]], *, subject: Optional[str] = None) -> List[Decision]:
        """Submit up to 1000 candidates in one transaction (POST /v1/memories/batch).

        Each item is a dict of POST /v1/memories fields (class or class_,
        namespace, body, channel, key, ...); the answer is one decision per
        item, in order. An item that is invalid fails the whole batch.
        """
        body = []
        for it in items:
            it = {("class" if k == "class_" else k): v for k, v in it.items() if v is not None}
            if "derived_from" in it:
                it["derived_from"] = list(it["derived_from"])
            body.append(it)
        d = self._request("POST", "/v1/memories/batch", body={"subject": self._subject(subject), "items": body})
        return [Decision.from_dict(x) for x in d.get("items") or []]

    def get(self, id: str, *, subject: Optional[str] = None, session: Optional[str] = None) -> Record:
        """One eligible record. With session (one the caller opened), the read is
        recorded in it for the impact of a later repair."""
        return Record.from_dict(self._request("GET", f"/v1/memories/{self._id(id)}",
                                              {"subject": self._subject(subject), "session": session}))

    def list(self, *, namespace: Optional[str] = None, key: Optional[str] = None, class_: Optional[str] = None,
             limit: Optional[int] = None, cursor: Optional[str] = None, subject: Optional[str] = None,
             namespace_prefix: Optional[str] = None, key_prefix: Optional[str] = None,
             created_after: Optional[str] = None, created_before: Optional[str] = None,
             metadata: Optional[Dict[str, str]] = None, session: Optional[str] = None) -> Page:
        """One page of eligible records, newest version per key. namespace_prefix
        keeps a namespace and those below it (work: work, work/notes; not workshop);
        key_prefix the keys that start with it; created_after and created_before
        (RFC 3339) bound the creation time, strictly; metadata keeps the records
        whose metadata has every one of these keys with exactly this value. With
        session, the page's ids are recorded as the session's read."""
        q = {"namespace": namespace, "namespace_prefix": namespace_prefix, "key": key, "class": class_,
             "key_prefix": key_prefix, "session": session, "created_after": created_after, "created_before": created_before,
             "limit": limit, "cursor": cursor, "subject": self._subject(subject)}
        for k, v in (metadata or {}).items():
            q["metadata." + k] = v
        d = self._request("GET", "/v1/memories", q)
        return Page([Record.from_dict(r) for r in d.get("items") or []], d.get("next_cursor") or "")

    def iter_memories(self, *, page_size: Optional[int] = None, **filters: Any) -> Iterator[Record]:
        """Every eligible record, following next_cursor page by page."""
        return _pages(lambda cursor: self.list(limit=page_size, cursor=cursor, **filters))

    def search(self, query: str, *, namespace: Optional[str] = None, class_: Optional[str] = None,
               limit: Optional[int] = None, subject: Optional[str] = None,
               namespace_prefix: Optional[str] = None, key_prefix: Optional[str] = None,
               created_after: Optional[str] = None, created_before: Optional[str] = None,
               metadata: Optional[Dict[str, str]] = None, session: Optional[str] = None,
               mode: Optional[str] = None) -> SearchResults:
        """Eligible records ranked against plain text, best first, each with .score
        and .lists (which lists found it). The filters are those of list. With
        session, the hits' ids are recorded as the session's read. mode is
        lexical, semantic or hybrid (default: hybrid when the server has an
        embedder); the result's .mode says which ranked, and .fallback why a
        search was answered lexically."""
        d = self._request("POST", "/v1/search", body={"query": query, "namespace": namespace, "session": session,
                                                      "namespace_prefix": namespace_prefix, "class": class_,
                                                      "key_prefix": key_prefix, "created_after": created_after,
                                                      "created_before": created_before,
                                                      "metadata": dict(metadata) if metadata else None,
                                                      "limit": limit, "subject": self._subject(subject), "mode": mode})
        return SearchResults([Record.from_dict(r) for r in d.get("items") or []], d.get("mode") or "", d.get("fallback") or "")

    def history(self, id: str, *, subject: Optional[str] = None) -> List[Record]:
        d = self._request("GET", f"/v1/memories/{self._id(id)}/history", {"subject": self._subject(subject)})
        return [Record.from_dict(r) for r in d.get("items") or []]

    def lineage(self, id: str, *, subject: Optional[str] = None) -> Dict[str, Any]:
        """{record, ancestors: [...], descendants: [...]} with weights and states."""
        return self._request("GET", f"/v1/memories/{self._id(id)}/lineage", {"subject": self._subject(subject)})

    def impact(self, id: str) -> Dict[str, Any]:
        """What a record reached (reviewer or admin): {record, descendants,
        sessions, decisions, reads_since}. Anyone else gets NotFound."""
        return self._request("GET", f"/v1/memories/{self._id(id)}/impact")

    def confirm(self, id: str, *, subject: Optional[str] = None) -> Record:
        """The owner confirms a pending_confirmation write."""
        return Record.from_dict(self._request("POST", f"/v1/memories/{self._id(id)}/confirm",
                                              body={"subject": self._subject(subject)}))

    def forget(self, id: str, reason: Optional[str] = None, erase: bool = False, *,
               subject: Optional[str] = None) -> List[str]:
        """The owner retires a memory of its own (DELETE /v1/memories/{id}); erase=True erases its body too."""
        return self._request("DELETE", f"/v1/memories/{self._id(id)}", {
            "erase": "true" if erase else None, "reason": reason, "subject": self._subject(subject)})["affected"]

    def erase_subject(self, name: str, reason: Optional[str] = None, *,
                      subject: Optional[str] = None) -> ErasureReceipt:
        """Erase every memory body of a subject (admin, or the user itself), with a receipt."""
        return ErasureReceipt.from_dict(self._request("POST", f"/v1/subjects/{self._id(name)}/erase",
                                                      body={"reason": reason, "subject": self._subject(subject)}))

    def namespaces(self, *, prefix: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None,
                   subject: Optional[str] = None) -> Page:
        """One page of the namespaces holding a memory the subject may retrieve (items are names)."""
        d = self._request("GET", "/v1/namespaces", {"prefix": prefix, "limit": limit, "cursor": cursor,
                                                     "subject": self._subject(subject)})
        return Page(list(d.get("items") or []), d.get("next_cursor") or "")

    def iter_namespaces(self, *, prefix: Optional[str] = None, page_size: Optional[int] = None,
                        subject: Optional[str] = None) -> Iterator[str]:
        """Every such namespace, following next_cursor page by page."""
        return _pages(lambda cursor: self.namespaces(prefix=prefix, limit=page_size, cursor=cursor, subject=subject))

    # -- repair ----------------------------------------------------------

    def quarantine(self, id: str, reason: Optional[str] = None, *, subject: Optional[str] = None) -> List[str]:
        return self._request("POST", f"/v1/memories/{self._id(id)}/quarantine",
                             body={"reason": reason, "subject": self._subject(subject)})["affected"]

    def retire(self, id: str, reason: Optional[str] = None, erase: bool = False, *,
               subject: Optional[str] = None) -> List[str]:
        return self._request("POST", f"/v1/memories/{self._id(id)}/retire",
                             body={"reason": reason, "erase": erase or None, "subject": self._subject(subject)})["affected"]

    def rebuild(self, id: str, body: Optional[str] = None, *, subject: Optional[str] = None) -> List[str]:
        return self._request("POST", f"/v1/memories/{self._id(id)}/rebuild",
                             body={"body": body, "subject": self._subject(subject)})["affected"]

    # -- review ----------------------------------------------------------

    def review(self, *, limit: Optional[int] = None, cursor: Optional[str] = None,
               subject: Optional[str] = None) -> Page:
        """One page of the review queue; each item has .proposed for keyed records."""
        d = self._request("GET", "/v1/review", {"limit": limit, "cursor": cursor, "subject": self._subject(subject)})
        return Page([Record.from_dict(r) for r in d.get("items") or []], d.get("next_cursor") or "")

    def iter_review(self, *, page_size: Optional[int] = None, subject: Optional[str] = None) -> Iterator[Record]:
        return _pages(lambda cursor: self.review(limit=page_size, cursor=cursor, subject=subject))

    def approve(self, id: str, reason: Optional[str] = None, *, subject: Optional[str] = None) -> Record:
        """Admit a held candidate; reason is kept in the receipt and the log."""
        return Record.from_dict(self._request("POST", f"/v1/review/{self._id(id)}/approve",
                                              body={"reason": reason, "subject": self._subject(subject)}))

    def reject(self, id: str, reason: Optional[str] = None, *, subject: Optional[str] = None) -> Record:
        return Record.from_dict(self._request("POST", f"/v1/review/{self._id(id)}/reject",
                                              body={"reason": reason, "subject": self._subject(subject)}))

    def reevaluate(self, *, subject: Optional[str] = None) -> List[str]:
        return self._request("POST", "/v1/review/reevaluate", body={"subject": self._subject(subject)})["changed"]

    # -- sessions and the gate -------------------------------------------

    def open_session(self, subject: Optional[str] = None) -> "Session":
        """Open a session for subject; the answer is a harness Session (see harness.py)."""
        from .harness import Session
        info = SessionInfo.from_dict(self._request("POST", "/v1/sessions", body={"subject": self._subject(subject)}))
        return Session(self, info)

    def observe(self, session: str, channel: str, text: str, source_ref: Optional[str] = None, *,
                subject: Optional[str] = None) -> SessionInfo:
        """Record content that entered the model's context."""
        return SessionInfo.from_dict(self._request(
            "POST", f"/v1/sessions/{self._id(session)}/observations",
            body={"channel": channel, "text": text, "source_ref": source_ref, "subject": self._subject(subject)}))

    def gate(self, action: str, args: Optional[Dict[str, Any]] = None, justification: Sequence[str] = (), *,
             session: Optional[str] = None, subject: Optional[str] = None) -> GateDecision:
        """Ask the action gate whether action may run with these arguments."""
        return GateDecision.from_dict(self._request("POST", "/v1/gate", body={
            "action": action, "args": args or None, "justification": list(justification) or None,
            "session": session, "subject": self._subject(subject)}))

    def confirm_action(self, action: str, args: Optional[Dict[str, Any]] = None, *,
                       subject: Optional[str] = None) -> str:
        """The owner confirms this exact action once; returns its digest."""
        return self._request("POST", "/v1/gate/confirm", body={
            "action": action, "args": args or None, "subject": self._subject(subject)})["digest"]

    # -- the audit log ---------------------------------------------------

    def checkpoint(self, *, subject: Optional[str] = None) -> str:
        """The signed checkpoint, C2SP signed-note text."""
        return self._request("GET", "/v1/log/checkpoint", {"subject": self._subject(subject)}, raw=True)

    def inclusion_proof(self, index: int, size: int, *, subject: Optional[str] = None) -> Dict[str, Any]:
        return self._request("GET", "/v1/log/proof/inclusion", {"index": index, "size": size,
                                                                 "subject": self._subject(subject)})

    def consistency_proof(self, from_: int, to: int, *, subject: Optional[str] = None) -> Dict[str, Any]:
        return self._request("GET", "/v1/log/proof/consistency", {"from": from_, "to": to,
                                                                   "subject": self._subject(subject)})

    def log_entries(self, start: int, end: int, *, subject: Optional[str] = None) -> List[Dict[str, Any]]:
        """Entries [start, end); one the caller may not read is {index, leaf_hash} alone."""
        return self._request("GET", "/v1/log/entries", {"start": start, "end": end,
                                                         "subject": self._subject(subject)})["entries"]

    def iter_log_entries(self, start: int, end: int, *, page_size: int = 1000,
                         subject: Optional[str] = None) -> Iterator[Dict[str, Any]]:
        """Entries [start, end), fetched page_size at a time."""
        while start < end:
            stop = min(end, start + page_size)
            entries = self.log_entries(start, stop, subject=subject)
            if not entries:
                return
            yield from entries
            start += len(entries)

    def log_key(self, tenant: str) -> str:
        """The verifier key (C2SP signed-note vkey) of the checkpoints of tenant's log, each
        tenant's log having its own origin; asked without the token."""
        return self._request("GET", "/v1/log/key", {"tenant": tenant}, raw=True, auth=False).strip()

    def log_status(self, *, subject: Optional[str] = None) -> LogStatus:
        """{checkpoint, size, origin, verifier_key, last_verify} of the caller's tenant's log;
        last_verify is None before any custody verify."""
        return LogStatus.from_dict(self._request("GET", "/v1/log/status", {"subject": self._subject(subject)}))

    # -- principals (admin) ----------------------------------------------

    def principals(self, *, subject: Optional[str] = None) -> List[Principal]:
        d = self._request("GET", "/v1/principals", {"subject": self._subject(subject)})
        return [Principal.from_dict(p) for p in d.get("items") or []]

    def principal(self, name: str, *, subject: Optional[str] = None) -> Principal:
        return Principal.from_dict(self._request("GET", f"/v1/principals/{self._id(name)}",
                                                 {"subject": self._subject(subject)}))

    def update_principal(self, name: str, *, roles: Optional[Sequence[str]] = None,
                         channels: Optional[Sequence[str]] = None, groups: Optional[Sequence[str]] = None,
                         reason: Optional[str] = None, subject: Optional[str] = None) -> Principal:
        """Replace a principal's roles, channels or groups (those given; the others stay)."""
        return Principal.from_dict(self._request(
            "PATCH", f"/v1/principals/{self._id(name)}", {"subject": self._subject(subject)},
            body={"roles": _list(roles), "channels": _list(channels), "groups": _list(groups), "reason": reason}))

    def rotate_principal(self, name: str, reason: Optional[str] = None, *,
                         subject: Optional[str] = None) -> Rotated:
        """A new token for the principal; the old one is refused from now on."""
        d = self._request("POST", f"/v1/principals/{self._id(name)}/rotate", {"subject": self._subject(subject)},
                          body={"reason": reason})
        return Rotated(Principal.from_dict(d["principal"]), d["token"])

    def revoke_principal(self, name: str, reason: Optional[str] = None, *,
                         subject: Optional[str] = None) -> Principal:
        """Revoke the principal: its token is refused from now on."""
        return Principal.from_dict(self._request("POST", f"/v1/principals/{self._id(name)}/revoke",
                                                 {"subject": self._subject(subject)}, body={"reason": reason}))

    # -- pauses (admin or reviewer) --------------------------------------

    def pause(self, reason: str, *, writer: Optional[str] = None, channel: Optional[str] = None,
              for_: Optional[str] = None, until: Optional[str] = None, subject: Optional[str] = None) -> Pause:
        """Hold a writer's or a channel's candidates for review; for_ is a Go duration (90m), until RFC 3339."""
        return Pause.from_dict(self._request("POST", "/v1/pauses", body={
            "writer": writer, "channel": channel, "for": for_, "until": until, "reason": reason,
            "subject": self._subject(subject)}))

    def pauses(self, *, all: bool = False, subject: Optional[str] = None) -> List[Pause]:
        """The active pauses, or with all=True the resumed and ended ones too."""
        d = self._request("GET", "/v1/pauses", {"all": "true" if all else None, "subject": self._subject(subject)})
        return [Pause.from_dict(p) for p in d.get("items") or []]

    def resume(self, id: str, *, subject: Optional[str] = None) -> Pause:
        """End a pause; what it held stays quarantined for review."""
        return Pause.from_dict(self._request("DELETE", f"/v1/pauses/{self._id(id)}", {"subject": self._subject(subject)}))

    # -- policy and server -----------------------------------------------

    def get_policy(self, *, subject: Optional[str] = None) -> Dict[str, Any]:
        """{version, text, risks}."""
        return self._request("GET", "/v1/policy", {"subject": self._subject(subject)})

    def put_policy(self, text: str, *, force: bool = False, subject: Optional[str] = None) -> Dict[str, Any]:
        """Replace the tenant's policy; {version, changed}. force installs one that fails its dry run."""
        return self._request("PUT", "/v1/policy", {"force": "true" if force else None, "subject": self._subject(subject)},
                             body={"text": text})

    def health(self) -> Dict[str, Any]:
        return self._request("GET", "/healthz")

    def openapi(self) -> Dict[str, Any]:
        return self._request("GET", "/v1/openapi.json")


def _list(v: Optional[Sequence[str]]) -> Optional[List[str]]:
    return list(v) if v is not None else None


def _pages(fetch) -> Iterator[Any]:
    cursor: Optional[str] = None
    while True:
        page = fetch(cursor)
        yield from page.items
        if not page.next_cursor:
            return
        cursor = page.next_cursor

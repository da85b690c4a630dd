"""A pin of a custody server's log, as the Go client's client.Pin.

Every checkpoint fetched must be signed by the log's key, meet a C2SP witness
policy with fresh cosignatures (when one is given), and extend the checkpoint
pinned before, as a consistency proof from the server shows (RFC 6962).
Formats: docs/log-format.md sections 2, 3 and 5.

Ed25519 comes from the cryptography package, the optional extra
``pip install 'custody[verify]'``; it is imported only when a pin or a
policy is made, so the rest of the client works without it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import struct
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Sequence, Set, Union
from urllib.parse import urlparse

if TYPE_CHECKING:
    from .client import Client

DEFAULT_MAX_AGE = timedelta(hours=24)
"""How old the cosignatures a witness policy counts may be: a server refreshes them hourly."""

INSTALL_HINT = "pip install 'custody[verify]'"

_ALG_ED25519 = 0x01
_ALG_COSIGNATURE_V1 = 0x04


class MissingVerifyDependency(ImportError):
    """The cryptography package, which the pin needs for Ed25519, is not installed."""


class PinError(Exception):
    """A checkpoint the pin does not take; the pin stays as it was."""


class BadCheckpoint(PinError):
    """The server's checkpoint does not verify under the log's verifier key, or is malformed."""


class NotWitnessed(PinError):
    """The server's checkpoint does not meet the witness policy: too few of its witnesses
    cosigned it, or their cosignatures are older than max_age (a server frozen on an old
    checkpoint)."""

    def __init__(self, message: str):
        super().__init__("the server's checkpoint does not meet the witness policy: " + message)


class LogInconsistent(PinError):
    """The server's log is not an extension of the checkpoint pinned earlier: it is smaller, has
    another root at the same size, or no consistency proof links the two. The server's store
    was rolled back or its history rewritten."""

    def __init__(self, message: str):
        super().__init__("the server's log is not an extension of the checkpoint pinned earlier: " + message)


def _ed25519():
    try:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    except ImportError as e:
        raise MissingVerifyDependency(
            f"custody's log pin verifies Ed25519 signatures with the cryptography package, which is not "
            f"installed: run {INSTALL_HINT} (or pip install cryptography)") from e
    return Ed25519PublicKey, InvalidSignature


# -- keys and signed notes (C2SP signed-note) ---------------------------------------------

@dataclass(frozen=True)
class _NoteKey:
    name: str
    hash: bytes  # the 4-byte key hash that prefixes each signature
    pub: bytes

    def verify(self, msg: bytes, sig: bytes) -> bool:
        key_class, invalid = _ed25519()
        try:
            key_class.from_public_bytes(self.pub).verify(sig, msg)
            return True
        except invalid:
            return False


def _key_hash(name: str, alg_key: bytes) -> bytes:
    return hashlib.sha256(name.encode("utf-8") + b"\n" + alg_key).digest()[:4]


def _valid_name(name: str) -> bool:
    return name != "" and "+" not in name and not re.search(r"[\s\x00-\x1f\x7f]", name)


def _b64(text: str) -> Optional[bytes]:
    """Strict standard base64 with padding, or None."""
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw if base64.b64encode(raw).decode("ascii") == text else None


def _parse_vkey(vkey: str, witness: bool) -> _NoteKey:
    """Parses "<name>+<8 hex key hash>+<base64(alg ‖ Ed25519 key)>". A log key has alg 0x01; a
    witness key (cosignature/v1) 0x04, or 0x01 as golang.org/x/mod's and torchwood's keys are
    also taken, its hash then computed over 0x04 ‖ key."""
    what = "witness key" if witness else "verifier key"
    hint = "the key as the witness prints it" if witness else "the key custody serve prints, origin+hash+base64"

    def bad(why: str) -> ValueError:
        return ValueError(f"custody client: {what} {vkey!r}: {why} (use {hint})")

    parts = vkey.strip().split("+", 2)
    if len(parts) != 3 or not _valid_name(parts[0]) or not re.fullmatch(r"[0-9a-f]{8}", parts[1]):
        raise bad("not name+hash+base64")
    raw = _b64(parts[2])
    if raw is None or len(raw) != 33:
        raise bad("the key is not a base64 Ed25519 key with its algorithm byte")
    alg, pub = raw[0], raw[1:]
    if alg != _ALG_ED25519 and not (witness and alg == _ALG_COSIGNATURE_V1):
        raise bad(f"unknown key algorithm {alg}")
    h = _key_hash(parts[0], bytes([_ALG_COSIGNATURE_V1]) + pub if witness else raw)
    if alg == (_ALG_COSIGNATURE_V1 if witness else _ALG_ED25519) and h.hex() != parts[1]:
        raise bad("its key hash does not match its name and key")
    _ed25519()  # the verifier needs it: say so now, not at the first checkpoint
    return _NoteKey(parts[0], h, pub)


@dataclass
class _Note:
    text: str  # the signed text, ending in a newline
    sigs: List[tuple]  # (name, signature bytes)


def _split_note(msg: str) -> _Note:
    """Splits a signed note into its text and signature lines, as golang.org/x/mod's note.Open."""
    split = msg.rfind("\n\n")
    if split < 0 or not msg.endswith("\n"):
        raise BadCheckpoint("the checkpoint is not a signed note (no blank line before its signatures)")
    text = msg[:split + 1]
    if re.search(r"[\x00-\x09\x0b-\x1f\x7f]", text):
        raise BadCheckpoint("the checkpoint text holds a control character")
    sigs = []
    for line in msg[split + 2:-1].split("\n"):
        m = re.fullmatch(r"\u2014 (\S+) (\S+)", line)
        if not m:
            raise BadCheckpoint(f"the checkpoint has a malformed signature line {line!r}")
        sig = _b64(m.group(2))
        if sig is None or len(sig) < 5:
            raise BadCheckpoint(f"the checkpoint has a malformed signature of {m.group(1)}")
        sigs.append((m.group(1), sig))
    return _Note(text, sigs)


def _sigs_of(note: _Note, key: _NoteKey) -> List[bytes]:
    return [sig[4:] for name, sig in note.sigs if name == key.name and sig[:4] == key.hash]


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint of a log (C2SP tlog-checkpoint): its origin, tree size and RFC 6962 root."""
    origin: str
    size: int
    root: bytes


def _parse_checkpoint(text: str, origin: str) -> Checkpoint:
    lines = text.split("\n")
    if len(lines) != 4 or lines[3] != "":
        raise BadCheckpoint(f"the checkpoint body has {len(lines) - 1} lines, want 3")
    o, size_text, root_text = lines[:3]
    if o != origin:
        raise BadCheckpoint(f"the checkpoint's origin is {o!r}, want {origin!r}")
    if not re.fullmatch(r"0|[1-9][0-9]*", size_text) or int(size_text) >= 1 << 64:
        raise BadCheckpoint(f"the checkpoint size {size_text!r} is not a canonical decimal")
    root = _b64(root_text)
    if root is None or len(root) != 32:
        raise BadCheckpoint(f"the checkpoint root {root_text!r} is not a base64 SHA-256 hash")
    return Checkpoint(o, int(size_text), root)


def _open_checkpoint(msg: str, key: _NoteKey) -> Checkpoint:
    """Verifies msg under the log's key and parses it (as the Go client's tlog.OpenCheckpoint)."""
    note = _split_note(msg)
    sigs = _sigs_of(note, key)
    if not sigs:
        raise BadCheckpoint(f"the checkpoint is not signed by {key.name}+{key.hash.hex()}")
    for sig in sigs:
        if len(sig) != 64 or not key.verify(note.text.encode("utf-8"), sig):
            raise BadCheckpoint(f"the checkpoint's signature by {key.name} does not verify")
    return _parse_checkpoint(note.text, key.name)


# -- witness policies (C2SP tlog-policy) and cosignatures (C2SP tlog-cosignature) ----------

@dataclass(frozen=True)
class PolicyWitness:
    name: str
    vkey: str
    url: str = ""


@dataclass
class _Group:
    k: int
    members: List[str]


@dataclass
class WitnessPolicy:
    """A C2SP tlog-policy: the witnesses whose cosignatures count and the quorum of them a
    checkpoint needs. Make one with WitnessPolicy.parse(text)."""
    logs: List[str] = field(default_factory=list)
    witnesses: List[PolicyWitness] = field(default_factory=list)
    _keys: Dict[str, _NoteKey] = field(default_factory=dict, repr=False)
    _groups: Dict[str, _Group] = field(default_factory=dict, repr=False)
    _quorum: Optional[_Group] = field(default=None, repr=False)  # None: quorum none

    @classmethod
    def parse(cls, text: str) -> "WitnessPolicy":
        """Parses a policy file's text; every error (ValueError) names its line."""
        p = cls()
        used: Set[str] = set()
        keys: Set[str] = set()
        saw_quorum = False

        def defined(n: str) -> bool:
            return n in p._keys or n in p._groups or n == "none"

        for i, line in enumerate(text.split("\n"), 1):
            def bad(why: str) -> ValueError:
                return ValueError(f"policy line {i}: {why}")

            if re.search(r"[\x00-\x08\x0a-\x1f\x7f]", line):
                raise bad("control character (only tab and newline are allowed)")
            f = [x for x in re.split(r"[ \t]+", line) if x]
            if not f or f[0].startswith("#"):
                continue

            def unique_key(vkey: str, what: str) -> None:
                k = vkey[vkey.rfind("+") + 1:]
                if k in keys:
                    raise bad(f"the key of {what} is listed twice")
                keys.add(k)

            def check_url(rest: Sequence[str]) -> None:
                if rest:
                    u = urlparse(rest[0])
                    if u.scheme not in ("http", "https") or not u.netloc:
                        raise bad(f"{rest[0]!r} is not an http(s) URL")

            if f[0] == "log":
                if not 2 <= len(f) <= 3:
                    raise bad("want: log <vkey> [<url>]")
                try:
                    k = _parse_vkey(f[1], False)
                except ValueError as e:
                    raise bad(f"log key: {e}") from None
                check_url(f[2:])
                unique_key(f[1], f"log {k.name}")
                p.logs.append(f[1])
            elif f[0] == "witness":
                if not 3 <= len(f) <= 4:
                    raise bad("want: witness <name> <vkey> [<url>]")
                if defined(f[1]):
                    raise bad(f"the name {f[1]!r} is defined twice")
                try:
                    k = _parse_vkey(f[2], True)
                except ValueError as e:
                    raise bad(str(e)) from None
                check_url(f[3:])
                unique_key(f[2], f"witness {f[1]}")
                p._keys[f[1]] = k
                p.witnesses.append(PolicyWitness(f[1], f[2], f[3].rstrip("/") if len(f) == 4 else ""))
            elif f[0] == "group":
                if len(f) < 4:
                    raise bad("want: group <name> all|any|<k> <name>...")
                if defined(f[1]):
                    raise bad(f"the name {f[1]!r} is defined twice")
                members = f[3:]
                for m in members:
                    if m == "none":
                        raise bad("none cannot be a group member")
                    if not defined(m):
                        raise bad(f"{m!r} is not defined on a line before")
                    if m in used:
                        raise bad(f"{m!r} is a member of a group already")
                    used.add(m)
                if f[2] == "all":
                    k_ = len(members)
                elif f[2] == "any":
                    k_ = 1
                elif re.fullmatch(r"[1-9][0-9]*", f[2]) and int(f[2]) <= len(members):
                    k_ = int(f[2])
                else:
                    raise bad(f"threshold {f[2]!r}: want all, any, or a decimal k with 1 <= k <= {len(members)}")
                p._groups[f[1]] = _Group(k_, members)
            elif f[0] == "quorum":
                if len(f) != 2:
                    raise bad("want: quorum <name>")
                if saw_quorum:
                    raise bad("a second quorum line (a policy has exactly one)")
                saw_quorum = True
                if f[1] == "none":
                    continue
                if f[1] in p._groups:
                    p._quorum = p._groups[f[1]]
                elif defined(f[1]):
                    p._quorum = _Group(1, [f[1]])
                else:
                    raise bad(f"{f[1]!r} is not defined on a line before")
            else:
                raise bad(f"unknown keyword {f[0]!r} (want log, witness, group or quorum)")
        if not saw_quorum:
            raise ValueError("policy: no quorum line (write quorum <name>, or quorum none)")
        return p

    def none(self) -> bool:
        """Whether the policy asks for no cosignature (quorum none)."""
        return self._quorum is None

    def cosigners(self, msg: str, not_before: Optional[datetime] = None) -> Set[str]:
        """The names of the policy's witnesses with a valid cosignature/v1 on msg (a signed
        checkpoint with its cosignature lines) made no earlier than not_before (None: any)."""
        out: Set[str] = set()
        try:
            note = _split_note(msg)
        except BadCheckpoint:
            return out
        for w in self.witnesses:
            key = self._keys[w.name]
            for sig in _sigs_of(note, key):
                if len(sig) != 8 + 64:
                    continue
                (t,) = struct.unpack(">Q", sig[:8])
                signed = f"cosignature/v1\ntime {t}\n{note.text}".encode("utf-8")
                if not key.verify(signed, sig[8:]):
                    continue
                if not_before is not None and t < not_before.timestamp():
                    continue
                out.add(w.name)
                break
        return out

    def check(self, msg: str, not_before: Optional[datetime] = None) -> None:
        """Raises NotWitnessed unless msg meets the policy with cosignatures made since
        not_before (None: any)."""
        if self._quorum is None:
            return
        have = self.cosigners(msg, not_before)
        if self._holds(self._quorum, have):
            return
        names = [w.name for w in self.witnesses if w.name in have]
        fresh = ""
        if not_before is not None:
            fresh = " made since " + not_before.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        quorum = self._describe(self._quorum)
        todo = "wait for the witnesses to cosign, or ask the server's operator why they do not"
        if not names:
            raise NotWitnessed(f"the checkpoint carries no valid cosignature{fresh} of the policy's witnesses; "
                               f"its quorum is {quorum} ({todo})")
        raise NotWitnessed(f"the checkpoint's valid cosignatures{fresh} ({', '.join(names)}) do not meet the "
                           f"policy's quorum, {quorum} ({todo})")

    def _holds(self, g: _Group, have: Set[str]) -> bool:
        n = sum(1 for m in g.members if (self._holds(self._groups[m], have) if m in self._groups else m in have))
        return n >= g.k

    def _describe(self, g: _Group) -> str:
        parts = [f"{m} ({self._describe(self._groups[m])})" if m in self._groups else m for m in g.members]
        return parts[0] if len(parts) == 1 else f"{g.k} of {', '.join(parts)}"


# -- RFC 6962 consistency proofs ----------------------------------------------------------

def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def verify_consistency(size1: int, size2: int, proof: Sequence[bytes], root1: bytes, root2: bytes) -> Optional[str]:
    """Verifies an RFC 6962 consistency proof from a tree of size1 leaves with root1 to one of
    size2 with root2, as transparency-dev/merkle's proof.VerifyConsistency (which the server's
    own verifier uses). Returns why it fails, or None when it holds."""
    if size2 < size1:
        return f"size {size2} is smaller than {size1}"
    if size1 == size2:
        if proof:
            return "a proof between equal sizes must be empty"
        return None if root1 == root2 else "the roots differ"
    if size1 == 0:
        return "a proof from the empty tree must be empty" if proof else None
    if not proof:
        return "the proof is empty"
    index = size1 - 1
    inner = (index ^ (size2 - 1)).bit_length()
    border = bin(index >> inner).count("1")
    shift = (size1 & -size1).bit_length() - 1  # trailing zeros
    inner -= shift
    seed, start = proof[0], 1
    if size1 == 1 << shift:
        seed, start = root1, 0
    if len(proof) != start + inner + border:
        return f"the proof has {len(proof)} hashes, want {start + inner + border}"
    rest = list(proof[start:])
    if len(seed) != 32 or any(len(h) != 32 for h in rest):
        return "the proof holds a hash that is not 32 bytes"
    mask = index >> shift
    h1 = h2 = bytes(seed)
    for i in range(inner):
        if (mask >> i) & 1:
            h1, h2 = _node(rest[i], h1), _node(rest[i], h2)
        else:
            h2 = _node(h2, rest[i])
    for h in rest[inner:]:
        h1, h2 = _node(h, h1), _node(h, h2)
    if h1 != root1:
        return "the proof does not lead to the pinned root"
    if h2 != root2:
        return "the proof does not lead to the server's root"
    return None


# -- the pin ------------------------------------------------------------------------------

class Pin:
    """Holds the newest checkpoint of a server's log that the client verified, and holds the
    server to it: every checkpoint fetched after must be signed by the server's key, meet the
    witness policy if one is given, and extend the pinned one. A server whose store was rolled
    back or rewritten after the pin is caught by the first check after.

    verifier_key is the text form of the key that verifies the log's checkpoints
    ("<origin>+<hash>+<key>", as custody serve and custody log key print it); saved, if given,
    is a checkpoint pinned earlier (note()), which must verify under the key. Save note()
    between runs (e.g. to a file) so the pin outlives the process; the saved note is also a
    checkpoint custody verify --checkpoint takes. policy is a C2SP tlog-policy (its text or a
    WitnessPolicy); max_age bounds the age of the cosignatures it counts (negative: any age).
    A Pin is safe for concurrent use.
    """

    def __init__(self, client: "Client", verifier_key: str, saved: Optional[str] = None, *,
                 policy: Union[str, WitnessPolicy, None] = None, max_age: timedelta = DEFAULT_MAX_AGE,
                 now: Callable[[], float] = time.time, subject: Optional[str] = None):
        self._client = client
        self._key = _parse_vkey(verifier_key, False)
        self._policy = WitnessPolicy.parse(policy) if isinstance(policy, str) else policy
        if self._policy is not None and self._policy.logs and verifier_key.strip() not in self._policy.logs:
            raise ValueError(f"custody client: the witness policy lists logs, and not the log of the key "
                             f"{verifier_key!r} (add a log line for it, or use the policy of this log)")
        self._max_age = DEFAULT_MAX_AGE if max_age == timedelta(0) else max_age
        self._now = now
        self._subject = subject
        self._lock = threading.Lock()
        self._cp: Optional[Checkpoint] = None
        self._note: Optional[str] = None
        if saved:
            try:
                self._cp = _open_checkpoint(saved, self._key)
            except BadCheckpoint as e:
                raise BadCheckpoint(f"custody client: the pinned checkpoint does not verify under the verifier "
                                    f"key: {e} (give the key of the log the pin was made with)") from None
            self._note = saved

    def note(self) -> Optional[str]:
        """The pinned checkpoint as the server signed it, None before the first."""
        with self._lock:
            return self._note

    def pinned(self) -> Optional[Checkpoint]:
        """The pinned checkpoint, None before the first."""
        with self._lock:
            return self._cp

    def checkpoint(self) -> Checkpoint:
        """Fetches the server's checkpoint (GET /v1/log/checkpoint), verifies its signature, the
        witness policy and, when one is pinned, that it extends the pinned one (GET
        /v1/log/proof/consistency); then pins it and returns it. Raises BadCheckpoint,
        NotWitnessed or LogInconsistent, and the pin stays as it was."""
        with self._lock:
            msg = self._client.checkpoint(subject=self._subject)
            try:
                cp = _open_checkpoint(msg, self._key)
            except BadCheckpoint as e:
                raise BadCheckpoint(f"custody client: the server's checkpoint does not verify under the verifier "
                                    f"key: {e} (check that the key is this tenant's, as custody log key --tenant "
                                    f"prints it; if it is, the server is not the log you pinned)") from None
            if self._policy is not None:
                not_before = None
                if self._max_age > timedelta(0):
                    not_before = datetime.fromtimestamp(self._now(), timezone.utc) - self._max_age
                self._policy.check(msg, not_before)
            if self._cp is not None:
                self._consistent(self._cp, cp)
            self._cp, self._note = cp, msg
            return cp

    def _consistent(self, old: Checkpoint, cp: Checkpoint) -> None:
        evidence = "keep the pin as evidence and stop trusting this server until its operator explains"
        if cp.size < old.size:
            raise LogInconsistent(f"the server's checkpoint covers {cp.size} entries, fewer than the {old.size} of "
                                  f"the pinned one (the store was rolled back or truncated); {evidence}")
        if cp.size == old.size:
            if cp.root != old.root:
                raise LogInconsistent(f"at size {cp.size} the server's checkpoint has another root than the pinned "
                                      f"one (history was rewritten); {evidence}")
            return
        pr = self._client.consistency_proof(old.size, cp.size, subject=self._subject)
        hashes = [_b64(h) or b"" for h in (pr.get("hashes") or [])]
        why = verify_consistency(old.size, cp.size, hashes, old.root, cp.root)
        if why is not None:
            raise LogInconsistent(f"the server proves no consistency from the pinned size {old.size} to {cp.size} "
                                  f"(history was rewritten): {why}; {evidence}")

"""The pin of a server's log (custody.Pin) against a real server: an honest growing log moves
the pin forward, also across a restart with the pin saved; a rolled-back or rewritten store,
another key, a tampered checkpoint and a checkpoint short of the witness policy are refused.
Without the cryptography package the pin says which command installs it, and the rest of the
client works."""

import base64
import hashlib
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
import unittest
from datetime import timedelta

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from custody import (BadCheckpoint, Client, LogInconsistent, NotWitnessed, Pin, WitnessPolicy,
                     verify_consistency)

from .server import Server

S = None
TOKEN = ""
VKEY = ""
HERE = os.path.dirname(os.path.abspath(__file__))


def setUpModule():
    global S, TOKEN, VKEY
    S = Server()
    TOKEN = S.principal("alice", "--role", "user", "--channel", "user")
    S.start()
    VKEY = S.log_key()


def tearDownModule():
    S.stop()


class Editing(Client):
    """A client that hands the pin the server's checkpoint changed by edit."""

    def __init__(self, url, token, edit):
        super().__init__(url, token)
        self.edit = edit

    def checkpoint(self, *, subject=None):
        return self.edit(super().checkpoint(subject=subject))


def alice(edit=None):
    return Editing(S.url, TOKEN, edit) if edit else Client(S.url, TOKEN)


def remember(n, what):
    for i in range(n):
        alice().remember("notes", f"{what} {i}", "fact", "user")


def log_key(origin):
    """A fresh log verifier key (alg 0x01) named origin: not the server's."""
    pub = Ed25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    alg = b"\x01" + pub
    h = hashlib.sha256(origin.encode() + b"\n" + alg).digest()[:4]
    return f"{origin}+{h.hex()}+{base64.b64encode(alg).decode()}"


class Witness:
    """A witness key pair, its vkey (C2SP cosignature/v1, alg 0x04) and a cosigner of checkpoints."""

    def __init__(self, name):
        self.name = name
        self.priv = Ed25519PrivateKey.generate()
        alg = b"\x04" + self.priv.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.hash = hashlib.sha256(name.encode() + b"\n" + alg).digest()[:4]
        self.vkey = f"{name}+{self.hash.hex()}+{base64.b64encode(alg).decode()}"

    def cosign(self, msg, t, as_name=None):
        """Appends "— name base64(keyhash ‖ time ‖ Ed25519(cosignature/v1\\ntime T\\n ‖ text))"."""
        text = msg[:msg.index("\n\n") + 1]
        sig = self.priv.sign(f"cosignature/v1\ntime {t}\n{text}".encode())
        line = base64.b64encode(self.hash + struct.pack(">Q", t) + sig).decode()
        return f"{msg}\u2014 {as_name or self.name} {line}\n"


def bump_size(m, by=1):
    return re.sub(r"\n(\d+)\n", lambda g: f"\n{int(g.group(1)) + by}\n", m, count=1)


class PinTest(unittest.TestCase):
    def test_rollback_and_rewrite_refused_honest_log_moves_the_pin(self):
        remember(2, "before the copy")
        S.halt()
        with tempfile.TemporaryDirectory(prefix="custody-py-old-") as old:
            S.copy_store(old)  # the copy the store is rolled back to later
            S.start()
            pin = Pin(alice(), VKEY)
            self.assertIsNone(pin.note())
            first = pin.checkpoint()
            remember(3, "after the copy")
            grown = pin.checkpoint()
            self.assertGreater(grown.size, first.size)
            self.assertEqual(pin.checkpoint().size, grown.size)
            saved = pin.note()
            self.assertIn(f"\n{grown.size}\n", saved)

            # The honest restart: the saved pin holds, and the log grows on.
            S.halt()
            S.start()
            pin = Pin(alice(), VKEY, saved)
            self.assertEqual(pin.pinned().size, grown.size)
            remember(1, "after the restart")
            self.assertEqual(pin.checkpoint().size, grown.size + 1)
            saved = pin.note()

            # Rolled back to the copy (database, key and checkpoint file): a smaller log.
            S.halt()
            S.copy_store(old, back=True)
            S.start()
            pin = Pin(alice(), VKEY, saved)
            pinned = pin.pinned()
            with self.assertRaisesRegex(LogInconsistent, r"rolled back.*keep the pin"):
                pin.checkpoint()
            self.assertEqual(pin.pinned(), pinned, "the pin stays on an inconsistent log")
            self.assertEqual(pin.note(), saved)

            # Written again up to the pinned size: another root at that size.
            remember(pinned.size - first.size, "another history")
            with self.assertRaisesRegex(LogInconsistent, rf"at size {pinned.size} .* another root"):
                pin.checkpoint()
            # And past it: another history, no proof links it.
            remember(1, "another history, longer")
            with self.assertRaisesRegex(LogInconsistent, "rewritten"):
                pin.checkpoint()
            self.assertEqual(pin.note(), saved)
            # Its twin: a fresh pin of this history takes it and follows it.
            fresh = Pin(alice(), VKEY)
            cp = fresh.checkpoint()
            remember(1, "more of it")
            self.assertEqual(fresh.checkpoint().size, cp.size + 1)

    def test_only_the_logs_key_taken_tampered_checkpoint_refused(self):
        # The positive twin: the true key, the checkpoint as served.
        cp = Pin(alice(), VKEY).checkpoint()
        self.assertGreater(cp.size, 0)
        self.assertTrue(cp.origin.endswith("/acme"))
        # Another key under the same origin (name): not the log's.
        with self.assertRaisesRegex(BadCheckpoint, r"not signed by.*custody log key"):
            Pin(alice(), log_key(cp.origin)).checkpoint()
        with self.assertRaisesRegex(ValueError, "key hash does not match"):
            Pin(alice(), re.sub(r"\+[0-9a-f]{8}\+", "+00000000+", VKEY, count=1))
        # The size changed after signing: the signature no longer verifies.
        with self.assertRaisesRegex(BadCheckpoint, "does not verify"):
            Pin(alice(bump_size), VKEY).checkpoint()
        # A saved pin altered after signing is refused; the one saved is taken.
        pin = Pin(alice(), VKEY)
        pin.checkpoint()
        self.assertEqual(Pin(alice(), VKEY, pin.note()).pinned(), pin.pinned())
        with self.assertRaisesRegex(BadCheckpoint, "pinned checkpoint does not verify"):
            Pin(alice(), VKEY, bump_size(pin.note()))

    def test_witness_policy_quorum_of_fresh_cosignatures(self):
        w1, w2 = Witness("w1.example/witness"), Witness("w2.example/witness")
        policy = (f"# two witnesses, both required\nwitness w1 {w1.vkey} https://w1.example\n"
                  f"witness w2 {w2.vkey}\ngroup both all w1 w2\nquorum both\n")
        now = int(time.time())
        # Met: both cosigned within the day.
        pin = Pin(alice(lambda m: w2.cosign(w1.cosign(m, now), now - 60)), VKEY, policy=policy)
        cp = pin.checkpoint()
        self.assertRegex(pin.note(), r"\n\u2014 w1\.example/witness .*\n\u2014 w2\.example/witness ")
        # One cosignature only: short of the quorum, named.
        with self.assertRaisesRegex(NotWitnessed, r"\(w1\) do not meet the policy's quorum, 2 of w1, w2"):
            Pin(alice(lambda m: w1.cosign(m, now)), VKEY, policy=policy).checkpoint()
        # None: the server's checkpoint as it serves it without witnesses.
        with self.assertRaisesRegex(NotWitnessed, "no valid cosignature"):
            Pin(alice(), VKEY, policy=policy).checkpoint()
        # Stale: w2's cosignature is two days old; with a maximum age it meets, it passes.
        stale = lambda m: w2.cosign(w1.cosign(m, now), now - 2 * 86400)  # noqa: E731
        with self.assertRaisesRegex(NotWitnessed, "made since"):
            Pin(alice(stale), VKEY, policy=policy).checkpoint()
        self.assertEqual(Pin(alice(stale), VKEY, policy=policy, max_age=timedelta(days=3)).checkpoint().size, cp.size)
        self.assertEqual(Pin(alice(stale), VKEY, policy=policy, max_age=timedelta(seconds=-1)).checkpoint().size, cp.size)
        # A cosignature under w2's name by another key, and one over another checkpoint: not counted.
        impostor = Witness("w2.example/witness")
        with self.assertRaises(NotWitnessed):
            Pin(alice(lambda m: impostor.cosign(w1.cosign(m, now), now)), VKEY, policy=policy).checkpoint()

        def elsewhere(m):
            other = bump_size(m, 5)
            return w1.cosign(m, now) + w2.cosign(other, now)[len(other):]
        with self.assertRaises(NotWitnessed):
            Pin(alice(elsewhere), VKEY, policy=policy).checkpoint()
        # quorum none asks for nothing; a policy naming other logs does not cover this one.
        self.assertEqual(Pin(alice(), VKEY, policy="quorum none\n").checkpoint().size, cp.size)
        with self.assertRaisesRegex(ValueError, "lists logs, and not the log of the key"):
            Pin(alice(), VKEY, policy=f"log {log_key(cp.origin)}\nquorum none\n")
        self.assertEqual(Pin(alice(), VKEY, policy=f"log {VKEY}\nquorum none\n").checkpoint().size, cp.size)

    def test_policy_parse_errors_name_the_line(self):
        w = Witness("w.example")
        self.assertEqual(WitnessPolicy.parse(f"witness a {w.vkey}\nquorum a\n").witnesses[0].name, "a")
        with self.assertRaisesRegex(ValueError, "no quorum line"):
            WitnessPolicy.parse(f"witness a {w.vkey}\n")
        with self.assertRaisesRegex(ValueError, "line 2: .*defined twice"):
            WitnessPolicy.parse(f"witness a {w.vkey}\nwitness a {w.vkey}\nquorum a\n")
        with self.assertRaisesRegex(ValueError, "line 2: threshold"):
            WitnessPolicy.parse(f"witness a {w.vkey}\ngroup g 2 a\nquorum g\n")
        with self.assertRaisesRegex(ValueError, "line 1: 'b' is not defined"):
            WitnessPolicy.parse("quorum b\n")


class VectorsTest(unittest.TestCase):
    def test_cosignature_vector_of_the_go_implementation(self):
        """clients/testdata/cosignature-v1.json, made by Go's note and torchwood libraries."""
        from datetime import datetime, timezone
        with open(os.path.join(HERE, "..", "..", "testdata", "cosignature-v1.json")) as f:
            v = json.load(f)
        p = WitnessPolicy.parse(v["policy"])
        at = datetime.fromtimestamp(v["time"], timezone.utc)
        self.assertEqual(p.cosigners(v["checkpoint"], at), {"w"})
        self.assertEqual(p.cosigners(v["checkpoint"], at + timedelta(seconds=1)), set(), "made before not_before")
        self.assertEqual(p.cosigners(bump_size(v["checkpoint"])), set(), "another checkpoint")

    def test_consistency_proofs_every_pair_up_to_20(self):
        """RFC 6962 proofs computed here from the definition: each true proof holds; each with a
        hash flipped, a hash short, or another root fails."""
        def leaf(i):
            return hashlib.sha256(b"\x00" + f"leaf {i}".encode()).digest()

        def node(a, b):
            return hashlib.sha256(b"\x01" + a + b).digest()

        def split(n):
            k = 1
            while k * 2 < n:
                k *= 2
            return k

        def root(lo, hi):
            if hi - lo == 1:
                return leaf(lo)
            k = split(hi - lo)
            return node(root(lo, lo + k), root(lo + k, hi))

        def subproof(m, lo, hi, b):  # RFC 6962 section 2.1.2
            n = hi - lo
            if m == n:
                return [] if b else [root(lo, hi)]
            k = split(n)
            if m <= k:
                return subproof(m, lo, lo + k, b) + [root(lo + k, hi)]
            return subproof(m - k, lo + k, hi, False) + [root(lo, lo + k)]

        for n in range(1, 21):
            for m in range(1, n + 1):
                p = [] if m == n else subproof(m, 0, n, True)
                self.assertIsNone(verify_consistency(m, n, p, root(0, m), root(0, n)), f"{m} -> {n}")
                if m == n:
                    continue
                self.assertIsNotNone(verify_consistency(m, n, p, root(0, m), leaf(99)), f"{m} -> {n}, another new root")
                self.assertIsNotNone(verify_consistency(m, n, p, leaf(99), root(0, n)), f"{m} -> {n}, another old root")
                for i in range(len(p)):
                    bad = [bytes(x ^ 1 for x in h) if j == i else h for j, h in enumerate(p)]
                    self.assertIsNotNone(verify_consistency(m, n, bad, root(0, m), root(0, n)), f"{m} -> {n}, hash {i} flipped")
                self.assertIsNotNone(verify_consistency(m, n, p[1:], root(0, m), root(0, n)), f"{m} -> {n}, a hash short")


class WithoutCryptographyTest(unittest.TestCase):
    def test_pin_names_the_install_command_client_works(self):
        """In a Python where cryptography cannot be imported, the client talks to the server and
        the pin refuses with the command that installs the extra."""
        script = (
            "import sys; sys.modules['cryptography'] = None\n"
            "import custody\n"
            f"c = custody.Client({S.url!r}, {TOKEN!r})\n"
            "print(c.remember('notes', 'no crypto here', 'fact', 'user').state)\n"
            "print(c.checkpoint().count(chr(10)) > 3)\n"
            "try:\n"
            f"    custody.Pin(c, {VKEY!r})\n"
            "except custody.MissingVerifyDependency as e:\n"
            "    print('refused:', e)\n"
        )
        out = subprocess.run([sys.executable, "-c", script], cwd=os.path.join(HERE, ".."),
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        lines = out.stdout.splitlines()
        self.assertEqual(lines[:2], ["admitted", "True"])
        self.assertIn("refused:", lines[2])
        self.assertIn("pip install 'custody[verify]'", lines[2])


if __name__ == "__main__":
    unittest.main()

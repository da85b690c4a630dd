"""Every route of the API through the Python client, against a real server."""

import base64
import hashlib
import unittest

import custody
from custody import Client

from .server import Server

S = None
TOK = {}


def setUpModule():
    global S
    S = Server()
    TOK["alice"] = S.principal("alice", "--role", "user", "--channel", "user")
    TOK["bob"] = S.principal("bob", "--role", "user", "--channel", "user")
    TOK["carol"] = S.principal("carol", "--role", "user", "--channel", "user")
    TOK["harness"] = S.principal("harness", "--role", "agent", "--channel", "agent", "--channel", "tool:email")
    TOK["reviewer"] = S.principal("rita", "--role", "reviewer")
    TOK["owner"] = S.principal("olga", "--role", "policy_owner")
    S.start()


def tearDownModule():
    S.stop()


def client(who, subject=None):
    return Client(S.url, TOK[who], subject=subject)


class MemoriesTest(unittest.TestCase):
    def test_remember_get_list_search_history(self):
        alice = client("alice")
        d1 = alice.remember("prefs", "short answers please", "preference", "user", key="tone", source_ref="chat:1")
        self.assertEqual(d1.state, "admitted")
        self.assertTrue(d1.admitted)
        self.assertEqual(d1.authority, "user")
        r = alice.get(d1.id)
        self.assertEqual((r.body, r.channel, r.writer, r.source_ref, r.class_), ("short answers please", "user", "acme/alice", "chat:1", "preference"))
        self.assertEqual(r.log_index, d1.log_index)
        d2 = alice.remember("prefs", "long answers please", "preference", "user", key="tone")
        page = alice.list(namespace="prefs", key="tone")
        self.assertEqual([x.id for x in page.items], [d2.id])
        hist = alice.history(d2.id)
        # the history marks the version in force: the older one is superseded, its body withheld
        self.assertEqual([(h.version, h.body, h.state, h.superseded_by, h.withheld) for h in hist],
                         [(1, "", "admitted", 2, True), (2, "long answers please", "admitted", None, False)])
        # one limit rule on every surface: above the maximum is refused, never cut
        with self.assertRaises(custody.InvalidInput) as too_many:
            alice.search("answers", limit=101)
        self.assertIn("limit must be at most 100 (got 101)", too_many.exception.message)
        found = alice.search("answers", namespace="prefs")
        self.assertEqual(found[0].id, d2.id)
        self.assertIsNotNone(found[0].score)
        # another user sees none of it: the same 404 as an absent id
        with self.assertRaises(custody.NotFound) as cm:
            client("bob").get(d2.id)
        self.assertEqual((cm.exception.status, cm.exception.code), (404, "not_found"))
        with self.assertRaises(custody.NotFound) as absent:
            alice.get("01ABSENTABSENTABSENTABSENT")
        self.assertEqual(absent.exception.message, cm.exception.message)
        self.assertEqual(client("bob").search("answers", namespace="prefs"), [])

    def test_metadata_and_filters(self):
        carol = client("carol")
        d = carol.remember("proj", "the apollo launch plan", "fact", "user", key="plan.apollo",
                           metadata={"project": "apollo", "channel": "admin"})
        carol.remember("proj", "the gemini launch plan", "fact", "user", key="plan.gemini", metadata={"project": "gemini"})
        carol.remember("proj", "a launch note", "episode", "user")
        r = carol.get(d.id)
        self.assertEqual(r.metadata, {"project": "apollo", "channel": "admin"})
        self.assertEqual(r.channel, "user")
        self.assertEqual([x.id for x in carol.list(namespace="proj", metadata={"project": "apollo"}).items], [d.id])
        self.assertEqual(len(carol.list(namespace="proj", key_prefix="plan.").items), 2)
        self.assertEqual(len(carol.list(namespace="proj").items), 3)
        self.assertEqual([x.id for x in carol.search("launch", metadata={"project": "apollo"})], [d.id])
        self.assertEqual(len(carol.search("launch", created_after="2000-01-01T00:00:00Z")), 3)
        self.assertEqual(carol.search("launch", created_before="2000-01-01T00:00:00Z"), [])
        with self.assertRaises(custody.InvalidInput) as cm:
            carol.remember("proj", "bad", "fact", "user", metadata={"Bad Key": "x"})
        self.assertIn("metadata", cm.exception.message)

    def test_search_modes(self):
        carol = client("carol")
        d = carol.remember("prefs", "short answers please", "preference", "user")
        lexical = carol.search("short answers", mode="lexical")
        self.assertEqual((lexical.mode, lexical.fallback), ("lexical", ""))
        self.assertEqual([(r.id, r.lists) for r in lexical], [(d.id, ["lexical"])])
        # the server has the built-in embedder: hybrid by default; the
        # record's vector may not be computed yet, its words match anyway
        hybrid = carol.search("short answers")
        self.assertEqual(hybrid.mode, "hybrid")
        self.assertEqual(hybrid[0].id, d.id)
        self.assertIn("lexical", hybrid[0].lists)
        with self.assertRaises(custody.InvalidInput):
            carol.search("short answers", mode="fuzzy")

    def test_pagination_iterator(self):
        bob = client("bob")
        ids = {bob.remember("notes", f"note {i}", "episode", "user").id for i in range(7)}
        first = bob.list(namespace="notes", limit=3)
        self.assertEqual(len(first.items), 3)
        self.assertTrue(first.next_cursor)
        seen = [r.id for r in bob.iter_memories(namespace="notes", page_size=3)]
        self.assertEqual(len(seen), len(set(seen)))
        self.assertEqual(set(seen), ids)

    def test_lineage_and_repair(self):
        alice = client("alice")
        p = alice.remember("trip", "flight on Monday", "fact", "user")
        c = alice.remember("trip", "summary: Monday flight", "fact", "user", derived_from=[{"id": p.id, "weight": 1}])
        lin = alice.lineage(c.id)
        self.assertEqual([a["id"] for a in lin["ancestors"]], [p.id])
        rev = client("reviewer")
        affected = rev.quarantine(p.id, "checking")
        self.assertEqual(affected[0], p.id)
        self.assertIn(c.id, affected)
        with self.assertRaises(custody.NotFound):
            alice.get(c.id)
        queue = [r.id for r in rev.iter_review()]
        self.assertIn(p.id, queue)
        approved = rev.approve(p.id)
        self.assertEqual((approved.state, approved.authority), ("admitted", "confirmed"))
        self.assertEqual(rev.rebuild(c.id)[0], c.id)
        self.assertEqual(alice.get(c.id).state, "admitted")
        self.assertIn(c.id, rev.retire(c.id, "obsolete"))
        with self.assertRaises(custody.NotFound):
            alice.get(c.id)

    def test_sensitive_overwrite_needs_confirmation(self):
        alice = client("alice")
        alice.remember("bank", "ACCT-1111", "fact", "user", key="payee_account")
        d = alice.remember("bank", "ACCT-2222", "fact", "user", key="payee_account")
        self.assertEqual(d.state, "pending_confirmation")
        self.assertEqual(alice.list(namespace="bank", key="payee_account").items[0].body, "ACCT-1111")
        self.assertEqual(alice.confirm(d.id).state, "admitted")
        self.assertEqual(alice.list(namespace="bank", key="payee_account").items[0].body, "ACCT-2222")
        with self.assertRaises(custody.Conflict) as cm:
            alice.confirm(d.id)
        self.assertEqual(cm.exception.status, 409)

    def test_reject(self):
        h = client("harness", "alice")
        d = h.remember("inbox", "the payee changed", "fact", "agent")
        self.assertEqual(d.state, "quarantined")
        rev = client("reviewer")
        self.assertEqual(rev.reject(d.id, "spam").state, "rejected")
        self.assertEqual(rev.reevaluate(), [])


class BatchTest(unittest.TestCase):
    def test_batch(self):
        carol = client("bob")
        items = [{"namespace": "batch", "key": "drink", "class_": "preference", "body": "tea", "channel": "user"},
                 {"namespace": "batch", "class": "episode", "body": "ordered tea", "channel": "user"}]
        if "/v1/memories/batch" not in carol.openapi()["paths"]:
            # a server without the route answers an error, which is raised
            with self.assertRaises(custody.CustodyError) as cm:
                carol.remember_batch(items)
            self.assertIn(cm.exception.status, (404, 405))
            return
        ds = carol.remember_batch(items)
        self.assertEqual([d.state for d in ds], ["admitted", "admitted"])
        self.assertEqual([carol.get(d.id).body for d in ds], ["tea", "ordered tea"])
        with self.assertRaises(custody.InvalidInput):
            carol.remember_batch([{"namespace": "batch2", "class": "fact", "body": "x", "channel": "user"},
                                  {"namespace": "bad namespace!", "class": "fact", "body": "y", "channel": "user"}])
        self.assertEqual(carol.list(namespace="batch2").items, [])


class ErrorsTest(unittest.TestCase):
    def test_typed_errors_carry_the_code(self):
        alice = client("alice")
        with self.assertRaises(custody.Forbidden) as cm:
            alice.remember("prefs", "x", "fact", "tool:web")
        self.assertEqual((cm.exception.status, cm.exception.code), (403, "forbidden"))
        with self.assertRaises(custody.SubjectNotAllowed) as cm:
            alice.list(subject="bob")
        self.assertEqual(cm.exception.code, "subject_not_allowed")
        self.assertIsInstance(cm.exception, custody.Forbidden)
        with self.assertRaises(custody.InvalidInput) as cm:
            alice.remember("bad namespace!", "x", "fact", "user")
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.field), (400, "invalid_input", "namespace"))
        with self.assertRaises(custody.Unauthenticated) as cm:
            Client(S.url, "cst_nope").list()
        self.assertEqual(cm.exception.code, "unauthenticated")
        with self.assertRaises(custody.CustodyError) as cm:
            Client("http://127.0.0.1:1", "x").health()
        self.assertEqual(cm.exception.code, "unreachable")
        # the positive twin
        self.assertEqual(client("alice").health(), {"status": "ok"})


class LogAndPolicyTest(unittest.TestCase):
    def test_log(self):
        alice = client("alice")
        d = alice.remember("log", "logged", "episode", "user")
        cp = alice.checkpoint().splitlines()
        size = int(cp[1])
        self.assertGreater(size, d.log_index)
        entries = alice.log_entries(d.log_index, d.log_index + 1)
        e = entries[0]
        self.assertEqual(e["index"], d.log_index)
        leaf = base64.b64decode(e["leaf"])
        self.assertEqual(base64.b64decode(e["leaf_hash"]), hashlib.sha256(b"\x00" + leaf).digest())
        # another user reads only index and leaf hash of alice's entry
        redacted = client("bob").log_entries(d.log_index, d.log_index + 1)[0]
        self.assertEqual(set(redacted), {"index", "leaf_hash"})
        proof = alice.inclusion_proof(d.log_index, size)
        self.assertEqual((proof["index"], proof["size"]), (d.log_index, size))
        self.assertIsInstance(proof["hashes"], list)
        cons = alice.consistency_proof(1, size)
        self.assertEqual((cons["from"], cons["to"]), (1, size))
        every = list(alice.iter_log_entries(0, size, page_size=2))
        self.assertEqual([x["index"] for x in every], list(range(size)))

    def test_policy(self):
        owner = client("owner")
        pol = owner.get_policy()
        self.assertEqual(len(pol["version"]), 64)
        with self.assertRaises(custody.Forbidden):
            client("alice").put_policy(pol["text"])
        with self.assertRaises(custody.InvalidInput):
            owner.put_policy("this is not cedar")
        changed = owner.put_policy(pol["text"] + "\n// reviewed\n")
        self.assertNotEqual(changed["version"], pol["version"])
        self.assertEqual(owner.get_policy()["version"], changed["version"])

    def test_openapi(self):
        doc = client("alice").openapi()
        self.assertIn("/v1/memories", doc["paths"])


if __name__ == "__main__":
    unittest.main()

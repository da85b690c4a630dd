"""The routes of principals, pauses, erasure, namespaces and the log's
status through the Python client, against a real server."""

import unittest

import custody
from custody import Client

from .server import Server

S = None
TOK = {}


def setUpModule():
    global S
    S = Server()
    TOK["admin"] = S.principal("ada", "--role", "admin")
    TOK["reviewer"] = S.principal("rita", "--role", "reviewer")
    for name in ("dora", "erin", "finn", "gail", "hugo"):
        TOK[name] = S.principal(name, "--role", "user", "--channel", "user")
    S.start()


def tearDownModule():
    S.stop()


def client(who=None, token=None):
    return Client(S.url, token if token is not None else TOK[who])


class PrincipalsTest(unittest.TestCase):
    def test_list_get_update(self):
        admin = client("admin")
        names = [p.name for p in admin.principals()]
        self.assertIn("dora", names)
        p = admin.principal("gail")
        self.assertEqual((p.name, p.tenant, p.roles, p.status), ("gail", "acme", ["user"], "active"))
        up = admin.update_principal("gail", channels=["user"], groups=["team"], reason="scope")
        self.assertEqual((up.channels, up.groups, up.roles), (["user"], ["team"], ["user"]))
        self.assertEqual(admin.principal("gail").groups, ["team"])
        with self.assertRaises(custody.NotFound):
            admin.principal("nobody")
        # not an admin: refused
        with self.assertRaises(custody.Forbidden):
            client("gail").principals()

    def test_rotate_then_revoke(self):
        admin = client("admin")
        old = client("dora")
        old.remember("notes", "before rotation", "fact", "user")
        rot = admin.rotate_principal("dora", "laptop lost")
        self.assertIsInstance(rot, custody.Rotated)
        self.assertEqual(rot.principal.name, "dora")
        self.assertNotEqual(rot.token, TOK["dora"])
        new = client(token=rot.token)
        self.assertTrue(new.remember("notes", "after rotation", "fact", "user").admitted)
        with self.assertRaises(custody.Unauthenticated) as cm:
            old.remember("notes", "with the old token", "fact", "user")
        self.assertEqual((cm.exception.status, cm.exception.code), (401, "unauthenticated"))
        revoked = admin.revoke_principal("dora", "left the team")
        self.assertEqual(revoked.status, "revoked")
        with self.assertRaises(custody.Unauthenticated):
            new.list(namespace="notes")
        # the others are unaffected
        self.assertTrue(client("hugo").remember("notes", "still here", "fact", "user").admitted)


class PausesTest(unittest.TestCase):
    def test_paused_channel_is_held_then_decided_as_before(self):
        # the user channel, tenant-wide: the tests of this module run one at a time
        rev, finn = client("reviewer"), client("finn")
        before = finn.remember("feed", "the meeting is at 10", "fact", "user")
        self.assertEqual(before.state, "admitted")
        p = rev.pause("chat relay compromised", channel="user")
        self.assertEqual((p.channel, p.reason, p.resumed_at), ("user", "chat relay compromised", None))
        try:
            self.assertIn(p.id, [x.id for x in rev.pauses()])
            held = finn.remember("feed", "the meeting moved to 11", "fact", "user")
            self.assertEqual(held.state, "quarantined")
            self.assertIn("pause:" + p.id, held.receipt["rules"])
            self.assertIn("chat relay compromised", held.reason)
        finally:
            resumed = rev.resume(p.id)
        self.assertTrue(resumed.resumed_at)
        self.assertNotIn(p.id, [x.id for x in rev.pauses()])
        self.assertIn(p.id, [x.id for x in rev.pauses(all=True)])
        after = finn.remember("feed", "the meeting is at 12", "fact", "user")
        self.assertEqual(after.state, before.state)
        self.assertFalse(any(r.startswith("pause:") for r in after.receipt.get("rules") or []))
        with self.assertRaises(custody.Conflict):
            rev.resume(p.id)
        with self.assertRaises(custody.Forbidden):
            finn.pause("not mine to pause", channel="user")

    def test_approve_with_reason(self):
        rev, finn = client("reviewer"), client("finn")
        p = rev.pause("checking finn", writer="finn", for_="1h")
        try:
            held = finn.remember("feed", "held for review", "fact", "user")
            self.assertEqual(held.state, "quarantined")
        finally:
            rev.resume(p.id)
        approved = rev.approve(held.id, "checked with finn")
        self.assertEqual(approved.state, "admitted")
        self.assertIn("checked with finn", approved.receipt["reason"])


class ErasureTest(unittest.TestCase):
    def test_forget_and_erase_subject(self):
        hugo = client("hugo")
        keep = hugo.remember("diary", "kept", "fact", "user")
        gone = hugo.remember("diary", "forget me", "fact", "user")
        self.assertEqual(hugo.forget(gone.id, "typo", erase=True)[0], gone.id)
        with self.assertRaises(custody.NotFound):
            hugo.get(gone.id)
        self.assertEqual(hugo.get(keep.id).body, "kept")

        erin = client("erin")
        ids = [erin.remember("diary", f"entry {i}", "fact", "user").id for i in range(2)]
        rc = client("admin").erase_subject("erin", "request 42")
        self.assertEqual(rc.subject, "erin")
        self.assertEqual(sorted(e["id"] for e in rc.erased), sorted(ids))
        for id in ids:
            with self.assertRaises(custody.NotFound):
                erin.get(id)
        self.assertEqual(hugo.get(keep.id).body, "kept")
        with self.assertRaises(custody.Forbidden):
            hugo.erase_subject("finn")


class NamespacesAndLogTest(unittest.TestCase):
    def test_namespaces_iterator(self):
        gail = client("gail")
        for ns in ("work", "work/notes", "work/plans", "workshop", "home"):
            gail.remember(ns, "kept in " + ns, "fact", "user")
        first = gail.namespaces(prefix="work", limit=2)
        self.assertEqual(len(first.items), 2)
        self.assertTrue(first.next_cursor)
        self.assertEqual(sorted(gail.iter_namespaces(prefix="work", page_size=2)), ["work", "work/notes", "work/plans"])
        self.assertEqual(set(gail.iter_namespaces()), {"work", "work/notes", "work/plans", "workshop", "home"})
        self.assertEqual(sorted(r.namespace for r in gail.list(namespace_prefix="work").items), ["work", "work/notes", "work/plans"])
        self.assertEqual(sorted(r.namespace for r in gail.search("kept", namespace_prefix="work")), ["work", "work/notes", "work/plans"])

    def test_log_key_and_status(self):
        key = client(token="").log_key("acme")
        self.assertTrue(key)
        st = client("admin").log_status()
        self.assertIsInstance(st, custody.LogStatus)
        self.assertEqual(st.verifier_key, key)
        self.assertEqual(key.split("+")[0], st.origin)
        self.assertTrue(st.origin.endswith("/acme"))
        self.assertTrue(st.checkpoint.startswith(st.origin + "\n"))
        self.assertNotEqual(client(token="").log_key("beta").split("+")[0], st.origin)
        self.assertGreater(st.size, 0)
        self.assertIsNone(st.last_verify)
        with self.assertRaises(custody.Unauthenticated):
            client(token="not-a-token").log_status()


if __name__ == "__main__":
    unittest.main()

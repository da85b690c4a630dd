"""A principal over its rate: the client waits out the 429 and sends the
request again (rate_limit_retries), against a real server whose limit is
one request a second."""

import time
import unittest
import urllib.error
import urllib.request
from unittest import mock

import custody
from custody import Client

from .server import Server

S = None
TOKEN = ""


def setUpModule():
    global S, TOKEN
    S = Server()
    TOKEN = S.principal("alice", "--role", "user", "--channel", "user")
    S.start("--rate-limit", "1", "--rate-burst", "1")


def tearDownModule():
    S.stop()


class Counted:
    """Wraps urlopen, keeping the status of every answer."""

    def __init__(self):
        self.statuses = []
        self._urlopen = urllib.request.urlopen

    def __call__(self, *args, **kwargs):
        try:
            resp = self._urlopen(*args, **kwargs)
        except urllib.error.HTTPError as e:
            self.statuses.append(e.code)
            raise
        self.statuses.append(resp.status)
        return resp


class RateLimitTest(unittest.TestCase):
    def counted(self):
        c = Counted()
        patcher = mock.patch("urllib.request.urlopen", c)
        patcher.start()
        self.addCleanup(patcher.stop)
        return c

    def test_1_retries_off_raise_with_the_wait(self):
        c = self.counted()
        alice = Client(S.url, TOKEN, rate_limit_retries=0)
        try:
            alice.remember("n", "first", "fact", "user")  # spends the burst
        except custody.RateLimited:
            pass
        with self.assertRaises(custody.RateLimited) as cm:
            alice.remember("n", "over the rate", "fact", "user")
        self.assertGreaterEqual(cm.exception.retry_after or 0, 1)
        self.assertEqual(c.statuses[-1], 429)
        self.assertEqual(c.statuses.count(429), 1, "a 429 is not sent again with retries off")

    def test_2_writes_over_the_rate_wait_and_are_made(self):
        c = self.counted()
        alice = Client(S.url, TOKEN)
        ids = []
        for body in ["one", "two", "three"]:
            d = alice.remember("n", body, "fact", "user")
            self.assertEqual(d.state, "admitted")
            ids.append(d.id)
        self.assertIn(429, c.statuses, f"no request met the limit ({c.statuses}): the test measured nothing")
        self.assertEqual(len([s for s in c.statuses if s != 429]), 3, "each write was made once")
        listed = {r.id for r in alice.list(namespace="n").items}
        for id in ids:
            self.assertIn(id, listed)

    def test_3_other_errors_are_not_sent_again(self):
        time.sleep(1.1)  # a token for this request
        c = self.counted()
        alice = Client(S.url, TOKEN)
        with self.assertRaises(custody.InvalidInput):
            alice.search("x", limit=101)
        self.assertEqual(c.statuses, [400])


if __name__ == "__main__":
    unittest.main()

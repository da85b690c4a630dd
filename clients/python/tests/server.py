"""A real custody server for the tests: built from the checkout (or
CUSTODY_BIN), on a fresh SQLite store, on a port the kernel picks."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import threading

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


class Server:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="custody-py-")
        self.db = os.path.join(self.dir, "custody.db")
        self.bin = os.environ.get("CUSTODY_BIN")
        if not self.bin:
            self.bin = os.path.join(self.dir, "custody")
            subprocess.run(["go", "build", "-o", self.bin, "./cmd/custody"], cwd=ROOT, check=True)
        self.proc = None
        self.url = ""
        self.log = []

    def principal(self, name: str, *flags: str) -> str:
        """custody principal add; returns the token it prints."""
        out = subprocess.run([self.bin, "principal", "add", "--db", self.db, "--tenant", "acme", "--name", name, *flags],
                             check=True, capture_output=True, text=True)
        return out.stdout.strip()

    def start(self, *flags: str):
        """custody serve on the store, with flags after the defaults."""
        self.proc = subprocess.Popen([self.bin, "serve", "--db", self.db, "--addr", "127.0.0.1:0", *flags],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for line in self.proc.stderr:
            self.log.append(line)
            m = re.search(r"custody is serving on (http://\S+)", line)
            if m:
                self.url = m.group(1)
                break
        if not self.url:
            self.proc.wait()
            raise RuntimeError("custody serve did not start:\n" + "".join(self.log))
        self._drainer = threading.Thread(target=self._drain, daemon=True)
        self._drainer.start()

    def _drain(self):
        proc = self.proc
        for line in proc.stderr:
            self.log.append(line)

    def log_key(self) -> str:
        """The verifier key of acme's log, read from the store's own files (custody log key --db)."""
        out = subprocess.run([self.bin, "log", "key", "--db", self.db, "--tenant", "acme"],
                             check=True, capture_output=True, text=True)
        return out.stdout.strip()

    def halt(self):
        """Stops the server and keeps its store, for a restart."""
        if self.proc:
            self.proc.terminate()
            self.proc.wait()
            if getattr(self, "_drainer", None):
                self._drainer.join()
            self.proc.stderr.close()
            self.proc = None
        self.url = ""

    def copy_store(self, dir: str, back: bool = False):
        """Copies the whole store of the halted server (database, key, checkpoint file) to dir, or from it."""
        for suffix in ("", "-wal", "-shm", ".key", ".checkpoint"):
            src, dst = os.path.join(dir, "custody.db" + suffix), self.db + suffix
            if not back:
                src, dst = dst, src
            if os.path.exists(src):
                shutil.copyfile(src, dst)
            elif os.path.exists(dst):
                os.remove(dst)

    def stop(self):
        self.halt()
        shutil.rmtree(self.dir, ignore_errors=True)

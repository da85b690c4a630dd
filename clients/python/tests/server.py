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

    def start(self):
        self.proc = subprocess.Popen([self.bin, "serve", "--db", self.db, "--addr", "127.0.0.1:0"],
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
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for line in self.proc.stderr:
            self.log.append(line)

    def stop(self):
        if self.proc:
            self.proc.terminate()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

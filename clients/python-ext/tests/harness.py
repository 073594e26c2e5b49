"""Shared set-up for the tests of zot_ext: finding zot, writing extension
folders that use zot_ext, and driving them through `zot rpc` with the
Python client of clients/python (a test-only dependency).

zot is $ZOT_BIN (the Makefile sets it to bin/zot), else ../../bin/zot
relative to clients/python-ext. Tests that need it are skipped, with a
message saying how to build it, when it is missing.
"""

import io
import json
import os
import sys
import tempfile
import textwrap
import time
import unittest
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

HERE = Path(__file__).resolve().parent
PACKAGE_DIR = HERE.parent
REPO = PACKAGE_DIR.parent.parent
sys.path.insert(0, str(PACKAGE_DIR))
sys.path.insert(1, str(REPO / "clients" / "python"))

import zot_client as z  # noqa: E402


def _zot_path() -> str:
    return os.path.abspath(os.environ.get("ZOT_BIN") or str(REPO / "bin" / "zot"))


ZOT = _zot_path()
HAVE_ZOT = os.path.isfile(ZOT) and os.access(ZOT, os.X_OK)
requires_zot = unittest.skipUnless(
    HAVE_ZOT,
    f"zot binary not found at {ZOT}: build it with `go build -o bin/zot ./cmd/zot` "
    "from the repository root, or set ZOT_BIN",
)

# Hang guards only: every answer on a healthy server is immediate.
RESPONSE_TIMEOUT = 20.0
EVENT_TIMEOUT = 20.0


class ExtTestCase(unittest.TestCase):
    """A test with a scratch directory, a zot home of its own and helpers
    to write an extension and drive it through `zot rpc`."""

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory(prefix="zot-ext-test-")
        self.addCleanup(tmp.cleanup)
        self.tmp = os.path.realpath(tmp.name)
        self.home = os.path.join(self.tmp, "home")
        self.work = os.path.join(self.tmp, "work")
        os.makedirs(self.home)
        os.makedirs(self.work)
        self.pushed: List[Any] = []

    def extension(self, name: str, source: str) -> str:
        """Writes an extension folder whose program is source (a Python
        script using zot_ext, dedented) and returns it. zot finds zot_ext
        through PYTHONPATH, which it passes on to its extensions."""
        folder = os.path.join(self.tmp, "exts", name)
        os.makedirs(folder)
        with open(os.path.join(folder, "extension.json"), "w", encoding="utf-8") as f:
            json.dump({"name": name, "version": "1.0.0", "exec": "./main.py", "language": "python"}, f)
        main = os.path.join(folder, "main.py")
        with open(main, "w", encoding="utf-8") as f:
            f.write(f"#!{sys.executable}\n" + textwrap.dedent(source))
        os.chmod(main, 0o755)
        return folder

    def client(self, folder: str, script: Optional[Dict[str, Any]] = None) -> z.Client:
        """Starts `zot rpc --provider scripted --ext folder`; closed at
        cleanup. What extensions push lands in self.pushed."""
        flags = ["--provider", "scripted", "--cwd", self.work, "--ext", folder]
        if script is not None:
            path = os.path.join(self.tmp, "script.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(script, f)
            flags += ["--script", path]
        self.stderr = io.StringIO()
        c = z.Client(
            flags,
            binary=ZOT,
            env={"ZOTCORE_RPC_TOKEN": None, "ZOT_HOME": self.home, "PYTHONPATH": str(PACKAGE_DIR)},
            cwd=self.work,
            stderr=self.stderr,
            timeout=RESPONSE_TIMEOUT,
            event_timeout=EVENT_TIMEOUT,
            on_unrouted=self.pushed.append,
        )
        self.addCleanup(self._shut, c)
        return c

    @staticmethod
    def _shut(c: z.Client) -> None:
        try:
            c.close(timeout=10)
        except Exception:  # noqa: BLE001 - best effort at cleanup
            pass

    def ready(self, c: z.Client) -> list:
        """Waits until every extension of c finished its handshake (zot
        starts them in the background) and returns them."""
        return self.wait_for("the extensions' handshakes", lambda: (lambda exts: exts if all(
            e.state != "starting" for e in exts) else None)(c.get_extensions().extensions))

    def log(self, name: str) -> str:
        """The extension's log in the test's zot home."""
        try:
            with open(os.path.join(self.home, "logs", f"ext-{name}.log"), encoding="utf-8") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def wait_for(self, what: str, cond: Callable[[], Any], timeout: float = EVENT_TIMEOUT) -> Any:
        """Polls cond until it returns something true."""
        deadline = time.time() + timeout
        while True:
            got = cond()
            if got:
                return got
            if time.time() > deadline:
                self.fail(f"timed out waiting for {what}; pushed {[getattr(e, 'TYPE', e) for e in self.pushed]}")
            time.sleep(0.01)


def tool_results(events) -> list:
    """The tool_result events among events."""
    return [e for e in events if getattr(e, "TYPE", None) == "tool_result"]


def result_text(ev) -> str:
    return "".join(b.text for b in ev.content if getattr(b, "TYPE", None) == "text")

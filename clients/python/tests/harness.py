"""Shared set-up for the client tests: finding zot, writing scripts for the
scripted provider, and starting clients that are always shut down.

zot is $ZOT_BIN (the Makefile sets it to bin/zot), else ../../bin/zot
relative to clients/python. Tests that need it are skipped, with a message
saying how to build it, when it is missing.
"""

import atexit
import io
import json
import os
import shutil
import sys
import tempfile
import unittest
from pathlib import Path
from typing import Any, Dict, Optional

HERE = Path(__file__).resolve().parent
CLIENT_DIR = HERE.parent
sys.path.insert(0, str(CLIENT_DIR))

from zot_client import Client, ZotClosedError  # noqa: E402


def _zot_path() -> str:
    return os.path.abspath(os.environ.get("ZOT_BIN") or str(CLIENT_DIR / ".." / ".." / "bin" / "zot"))


# Tests never touch the user's zot home: every zot the tests start (through
# any client, with or without an env of its own) inherits this scratch one.
_ZOT_HOME = tempfile.mkdtemp(prefix="zot-client-test-home-")
atexit.register(shutil.rmtree, _ZOT_HOME, True)
os.environ["ZOT_HOME"] = _ZOT_HOME

ZOT = _zot_path()
HAVE_ZOT = os.path.isfile(ZOT) and os.access(ZOT, os.X_OK)
requires_zot = unittest.skipUnless(
    HAVE_ZOT,
    f"zot binary not found at {ZOT}: build it with `go build -o bin/zot ./cmd/zot` "
    "from the repository root, or set ZOT_BIN",
)

# Hang guards only: every answer on a healthy server is immediate, and the
# slowest scripted step here lasts about a second.
RESPONSE_TIMEOUT = 20.0
EVENT_TIMEOUT = 20.0

# The first prompt runs `bash sleep 30` (long enough that only an abort ends
# it within the event timeout); later prompts echo.
SLEEP_SCRIPT = {
    "turns": [
        {
            "steps": [
                {
                    "text": "Sleeping.",
                    "tool_calls": [{"id": "call_sleep", "name": "bash", "args": {"command": "sleep 30"}}],
                },
                {"text": "Woke up."},
            ]
        },
        {"steps": [{"echo": True}]},
    ]
}

# Every prompt is answered "You said: <prompt>".
ECHO_SCRIPT = {"turns": [{"steps": [{"echo": True}]}]}

# The first prompt fails: the provider rejects the call with HTTP 400,
# which is not retried.
ERROR_SCRIPT = {
    "turns": [{"steps": [{"error": {"status": 400, "kind": "invalid_request_error", "message": "scripted failure"}}]}]
}


class ZotTestCase(unittest.TestCase):
    """A test with a scratch directory (the tools' cwd) and helpers."""

    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="zot-client-test-")
        self.addCleanup(self._tmp.cleanup)
        self.tmp = os.path.realpath(self._tmp.name)

    def script(self, script: Dict[str, Any], name: str = "script.json") -> str:
        """Writes a scripted-provider script and returns its path."""
        path = os.path.join(self.tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(script, f)
        return path

    def zot_flags(self, script: Optional[Dict[str, Any]] = None, *extra: str) -> list:
        """Returns `zot rpc` flags for the scripted provider in self.tmp."""
        flags = ["--provider", "scripted", "--cwd", self.tmp]
        if script is not None:
            flags += ["--script", self.script(script)]
        return flags + list(extra)

    def client(
        self,
        script: Optional[Dict[str, Any]] = None,
        *extra: str,
        env: Optional[Dict[str, Optional[str]]] = None,
    ) -> Client:
        """Starts a Client on the scripted provider; closed at cleanup.

        zot's stderr is kept in self.stderr (shown when a test fails).
        """
        self.stderr = io.StringIO()
        child_env: Dict[str, Optional[str]] = {"ZOTCORE_RPC_TOKEN": None}
        child_env.update(env or {})
        c = Client(
            self.zot_flags(script, *extra),
            binary=ZOT,
            env=child_env,
            cwd=self.tmp,
            stderr=self.stderr,
            timeout=RESPONSE_TIMEOUT,
            event_timeout=EVENT_TIMEOUT,
        )
        self.addCleanup(self._shut, c)
        return c

    @staticmethod
    def _shut(c: Client) -> None:
        try:
            c.abort(all=True)
        except (ZotClosedError, Exception):  # noqa: BLE001 - best effort at cleanup
            pass
        c.close(timeout=10)


def event_types(events) -> list:
    """Returns the ``type`` of each event, typed or unknown."""
    return [getattr(e, "TYPE", None) or e.type for e in events]


def text_of(events) -> str:
    """Concatenates the text deltas of events."""
    return "".join(e.delta for e in events if getattr(e, "TYPE", None) == "text_delta")

"""zot_client.acp against the real zot: a daemon's WebSocket listener with a
token file (through a proxy that cuts the connection), and a started
``zot acp``. Each does initialize, new, a prompt with a permission request,
cancel, and load; over WebSocket a connection cut mid-answer is made again
and the answer goes on; a wrong token is refused with a clear error. The
WebSocket framing is tested on its own too."""

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path

from harness import HERE, ZOT, requires_zot

from zot_client import acp
from zot_client._websocket import WebSocket

TOKEN = "alice-0123456789abcdef0123"
SLOW = " ".join(f"w{i:02d}" for i in range(40)) + " THE END"
SCRIPT = {"turns": [
    {"steps": [
        {"text": "Writing.", "tool_calls": [{"id": "w1", "name": "write", "args": {"path": "a.txt", "content": "hello\n"}}]},
        {"text": "Done."},
    ]},
    {"steps": [{"text": "a long and slow answer that the client cancels", "chunk": 2, "delay_ms": 200}]},
    {"steps": [{"text": SLOW, "chunk": 4, "delay_ms": 50}]},
    {"steps": [
        {"text": "Writing again.", "tool_calls": [{"id": "w2", "name": "write", "args": {"path": "b.txt", "content": "again\n"}}]},
        {"text": "Written."},
    ]},
]}


class Proxy:
    """Relays loopback TCP connections to a port; ``cut`` closes them all
    (a network that goes away) while new ones are still accepted."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.ln = socket.create_server(("127.0.0.1", 0))
        self.port = self.ln.getsockname()[1]
        self.conns = []
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._accept, daemon=True)]
        self.threads[0].start()

    def _accept(self) -> None:
        while True:
            try:
                c, _ = self.ln.accept()
            except OSError:
                return
            up = socket.create_connection(("127.0.0.1", self.target))
            with self.lock:
                self.conns += [c, up]
            for a, b in ((c, up), (up, c)):
                t = threading.Thread(target=self._copy, args=(a, b), daemon=True)
                t.start()
                self.threads.append(t)

    @staticmethod
    def _copy(src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self) -> None:
        with self.lock:
            conns, self.conns = self.conns, []
        for s in conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self) -> None:
        try:
            self.ln.shutdown(socket.SHUT_RDWR)  # wakes the accept
        except OSError:
            pass
        self.ln.close()
        self.cut()
        for t in self.threads:
            t.join(5)


class Seen:
    """What a client's callbacks saw."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.text = ""
        self.perms = []
        self.cut_at, self.cut = None, None  # cut() at the first question about cut_at

    def update(self, params) -> None:
        u = params.get("update", {})
        content = u.get("content") or {}
        with self.lock:
            if u.get("sessionUpdate") == "agent_message_chunk" and content.get("type") == "text":
                self.text += content["text"]
            if u.get("sessionUpdate") == "user_message_chunk" and content.get("type") == "text":
                self.text += "[user]" + content["text"]

    def permission(self, req) -> str:
        with self.lock:
            self.perms.append(req["toolCall"]["toolCallId"])
            if req["toolCall"]["toolCallId"] == self.cut_at and self.cut:
                self.cut()
                self.cut = None
        return "allow_once"

    def wait(self, want: str) -> None:
        deadline = time.monotonic() + 30
        while want not in self.text:
            if time.monotonic() > deadline:
                raise AssertionError(f"no {want!r} in {self.text!r}")
            time.sleep(0.01)


def turns(test: unittest.TestCase, c: acp.Client, seen: Seen, work: str) -> str:
    """The script's first two turns: a write that asks, a cancelled answer."""
    sid = c.new_session(work)
    res = c.prompt(sid, "write a.txt")
    test.assertEqual(res.stop_reason, "end_turn")
    test.assertEqual(seen.perms, ["w1"])
    test.assertEqual(Path(work, "a.txt").read_text(), "hello\n")
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("res", c.prompt(sid, "a slow one")))
    t.start()
    seen.wait("a long")
    c.cancel(sid)
    t.join(30)
    test.assertEqual(out["res"].stop_reason, "cancelled")
    return sid


@requires_zot
class TestACP(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.TemporaryDirectory(prefix="zd")
        self.addCleanup(self.dir.cleanup)
        d = self.dir.name
        self.script = os.path.join(d, "script.json")
        Path(self.script).write_text(json.dumps(SCRIPT))
        self.env = dict(os.environ, ZOT_HOME=os.path.join(d, "home"), ZOT_SOCKET=os.path.join(d, "s"))
        self.env.pop("ZOT_TOKEN", None)
        self.work = os.path.join(d, "work")
        os.mkdir(self.work)

    def daemon(self) -> str:
        tokens = os.path.join(self.dir.name, "tokens")
        Path(tokens).write_text(f"alice {TOKEN}\n")
        os.chmod(tokens, 0o600)
        err = open(os.path.join(self.dir.name, "daemon.log"), "wb")
        self.addCleanup(err.close)
        p = subprocess.Popen([ZOT, "daemon", "--provider", "scripted", "--script", self.script, "--permission", "ask",
                              "--listen", "ws://127.0.0.1:0", "--token-file", tokens],
                             env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        self.addCleanup(lambda: (p.kill(), p.wait()))
        deadline = time.monotonic() + 30
        while True:
            m = re.search(r"listening on (ws://\S+/acp)", Path(err.name).read_text())
            if m:
                return m.group(1)
            if time.monotonic() > deadline or p.poll() is not None:
                self.fail("the daemon does not listen: " + Path(err.name).read_text())
            time.sleep(0.02)

    def test_remote(self) -> None:
        url = self.daemon()
        proxy = Proxy(int(url.rsplit(":", 1)[1].split("/")[0]))
        self.addCleanup(proxy.close)
        purl = f"ws://127.0.0.1:{proxy.port}"

        with self.assertRaises(acp.RefusedError) as cm:
            acp.connect(purl, token="wrong-0123456789abcdef0123")
        self.assertEqual(cm.exception.status, 401)
        self.assertIn("refused the token", str(cm.exception))

        seen = Seen()
        with acp.connect(purl, token=TOKEN, on_update=seen.update, on_permission=seen.permission) as c:
            self.assertEqual(c.info["protocolVersion"], acp.types.PROTOCOL_VERSION)
            sid = turns(self, c, seen, self.work)
            out = {}
            t = threading.Thread(target=lambda: out.setdefault("res", c.prompt(sid, "a long one")))
            t.start()
            seen.wait("w04")
            proxy.cut()
            t.join(30)
            self.assertTrue(out["res"].reconnected, out)
            self.assertIn("THE END", seen.text)

            again = Seen()
            with acp.connect(purl, token=TOKEN, on_update=again.update) as c2:
                c2.load_session(sid, self.work)
            self.assertIn(SLOW, again.text)
            self.assertIn("[user]write a.txt", again.text)

            # Cut while a permission question waits: it is asked again on
            # the resumed connection, whose answer lets the write run.
            seen.cut_at, seen.cut = "w2", proxy.cut
            self.assertTrue(c.prompt(sid, "write b.txt").reconnected)
            self.assertEqual(Path(self.work, "b.txt").read_text(), "again\n")
            self.assertEqual(seen.perms.count("w2"), 2, seen.perms)

    def test_spawn(self) -> None:
        args = ["--provider", "scripted", "--script", self.script, "--permission", "ask"]
        seen = Seen()
        with acp.spawn(args, binary=ZOT, env=self.env, on_update=seen.update, on_permission=seen.permission) as c:
            sid = turns(self, c, seen, self.work)
        again = Seen()
        with acp.spawn(args, binary=ZOT, env=self.env, on_update=again.update) as c2:
            c2.load_session(sid, self.work)
        self.assertIn("[user]write a.txt", again.text)
        self.assertIn("Done.", again.text)

    def test_example(self) -> None:
        url = self.daemon()
        env = dict(self.env, ZOT_URL=url, ZOT_TOKEN=TOKEN, PYTHONPATH=str(HERE.parent))
        out = subprocess.run([sys.executable, str(HERE.parent / "examples" / "acp.py"), "write a.txt"],
                             env=env, cwd=self.work, capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("Writing.", out.stdout)
        self.assertIn("stop: end_turn", out.stdout)


class TestWebSocketFraming(unittest.TestCase):
    """The framing against a server written here: a fragmented message, a
    ping, a long message, the close."""

    def test_frames(self) -> None:
        import base64
        import hashlib
        import struct

        ln = socket.create_server(("127.0.0.1", 0))
        got = {}

        def serve() -> None:
            c, _ = ln.accept()
            req = b""
            while b"\r\n\r\n" not in req:
                req += c.recv(4096)
            key = re.search(rb"Sec-WebSocket-Key: (\S+)", req).group(1)
            got["auth"] = re.search(rb"Authorization: (.+)\r\n", req).group(1)
            acc = base64.b64encode(hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
            c.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      b"Sec-WebSocket-Accept: " + acc + b"\r\n\r\n")
            c.sendall(bytes([0x01, 3]) + b"hel" + bytes([0x89, 1]) + b"p" + bytes([0x80, 2]) + b"lo")
            big = b"x" * 70000
            c.sendall(bytes([0x81, 127]) + struct.pack("!Q", len(big)) + big)
            # The client's message: masked, to unmask.
            hdr = c.recv(2)
            n = hdr[1] & 0x7F
            mask = c.recv(4)
            data = b""
            while len(data) < n:
                data += c.recv(n - len(data))
            got["pong_or_text"] = hdr[0] & 0x0F
            # The pong came first; read on to the text.
            if got["pong_or_text"] == 0xA:
                hdr = c.recv(2)
                n = hdr[1] & 0x7F
                mask = c.recv(4)
                data = b""
                while len(data) < n:
                    data += c.recv(n - len(data))
            got["text"] = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
            c.sendall(bytes([0x88, 2]) + struct.pack("!H", 1000))
            c.recv(16)
            c.close()

        t = threading.Thread(target=serve)
        t.start()
        ws = WebSocket(f"ws://127.0.0.1:{ln.getsockname()[1]}/acp", headers={"Authorization": "Bearer tok"})
        self.assertEqual(ws.recv(), "hello")
        self.assertEqual(len(ws.recv()), 70000)
        ws.send("héllo")
        with self.assertRaises(Exception) as cm:
            ws.recv()
        self.assertEqual(getattr(cm.exception, "code", None), 1000)
        t.join(5)
        ln.close()
        self.assertEqual(got["auth"], b"Bearer tok")
        self.assertEqual(got["text"].decode(), "héllo")


if __name__ == "__main__":
    unittest.main()

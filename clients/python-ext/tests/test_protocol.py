"""The protocol as zot_ext speaks it, on pipes with a scripted host: the
order of the handshake, what is skipped, what a request's answer is, and
cancel and shutdown. The tests through zot itself are in test_ext.py."""

import io
import json
import os
import threading
import time
import unittest

import harness  # noqa: F401 - puts zot_ext on sys.path

import zot_ext
from zot_ext import Block, Extension, Rewrite, ToolError

ACK = {"type": "hello_ack", "protocol_version": 1, "zot_version": "dev", "provider": "p", "model": "m",
       "cwd": "/w", "extension_dir": "/e", "data_dir": "/d"}


class Host:
    """A scripted host: writes frames to the extension and reads its
    answers, with serve running on a thread."""

    def __init__(self, test: unittest.TestCase, ext: Extension):
        r1, w1 = os.pipe()  # host → extension
        r2, w2 = os.pipe()  # extension → host
        self.to_ext = os.fdopen(w1, "wb")
        self.from_ext = os.fdopen(r2, "rb")
        ext_in, ext_out = os.fdopen(r1, "rb"), os.fdopen(w2, "wb")
        self.error = None

        def serve():
            try:
                ext.serve(ext_in, ext_out)
            except BaseException as e:  # noqa: BLE001 - reported by the test
                self.error = e
            finally:
                ext_out.close()
                ext_in.close()

        self.thread = threading.Thread(target=serve, daemon=True)
        self.thread.start()
        test.addCleanup(self.close)

    def send(self, frame) -> None:
        self.to_ext.write((frame if isinstance(frame, str) else json.dumps(frame)).encode() + b"\n")
        self.to_ext.flush()

    def read(self) -> dict:
        line = self.from_ext.readline()
        if not line:
            raise EOFError("the extension closed its output")
        return json.loads(line)

    def read_until(self, type_: str) -> list:
        got = []
        while True:
            f = self.read()
            got.append(f)
            if f["type"] == type_:
                return got

    def close(self) -> None:
        try:
            self.to_ext.close()
        except OSError:
            pass
        self.thread.join(5)
        self.from_ext.close()


def everything() -> Extension:
    ext = Extension("t", "0.1", log=io.StringIO())

    @ext.tool(schema={"type": "object"}, timeout=2.5)
    def echo(args):
        "Echo."
        return [args.get("text", ""), zot_ext.image(b"\x89PNG\r\n\x1a\n", "image/png")]

    @ext.tool
    def bad(args):
        raise ToolError("bad input")

    @ext.tool
    def wait(args, request):
        request.cancelled.wait(5)
        ext.log("wait ended: " + request.reason)
        return "late"

    @ext.command
    def hi(args):
        "Say hi."
        return zot_ext.Insert("hi " + args)

    @ext.intercept_tool_call
    def guard(call):
        if call.tool_name == "bash":
            return Block("no bash")
        return Rewrite(args={"x": 1})

    @ext.intercept_assistant_message
    def redact(text):
        return text.replace("secret", "[redacted]")

    @ext.on("turn_end")
    def ended(ev):
        pass

    return ext


class HandshakeTest(unittest.TestCase):
    def test_hello_registrations_subscribe_ready_in_order(self):
        h = Host(self, everything())
        hello = h.read()
        self.assertEqual(hello, {"type": "hello", "name": "t", "version": "0.1", "capabilities": ["commands", "tools", "events"], "sends_ready": True})
        regs = [h.read() for _ in range(4)]
        self.assertEqual([(r["type"], r["name"]) for r in regs], [
            ("register_tool", "echo"), ("register_tool", "bad"), ("register_tool", "wait"), ("register_command", "hi")])
        self.assertEqual(regs[0], {"type": "register_tool", "name": "echo", "description": "Echo.", "schema": {"type": "object"}, "timeout_ms": 2500})
        self.assertEqual(regs[3]["description"], "Say hi.")
        # Nothing that depends on hello_ack comes before it: a request
        # before it is skipped, not answered.
        h.send({"type": "tool_call", "id": "0", "name": "echo", "args": {}})
        h.send("not json")
        h.send({"type": "from_the_future"})
        h.send(ACK)
        self.assertEqual(h.read(), {"type": "subscribe", "events": ["turn_end"], "intercept": ["tool_call", "assistant_message"]})
        self.assertEqual(h.read(), {"type": "ready"})
        h.send({"type": "shutdown"})
        self.assertEqual(h.read(), {"type": "shutdown_ack"})
        with self.assertRaises(EOFError):
            h.read()
        self.assertIsNone(h.error)


class RequestTest(unittest.TestCase):
    def setUp(self):
        self.ext = everything()
        self.h = Host(self, self.ext)
        self.h.send(ACK)
        self.h.read_until("ready")

    def test_answers_carry_the_request_id(self):
        h = self.h
        h.send({"type": "tool_call", "id": "1", "name": "echo", "args": {"text": "x"}})
        self.assertEqual(h.read(), {"type": "tool_result", "id": "1", "content": [
            {"type": "text", "text": "x"}, {"type": "image", "mime_type": "image/png", "data": "iVBORw0KGgo="}]})
        h.send({"type": "tool_call", "id": "2", "name": "bad", "args": {}})
        self.assertEqual(h.read(), {"type": "tool_result", "id": "2", "content": [{"type": "text", "text": "bad input"}], "is_error": True})
        h.send({"type": "tool_call", "id": "3", "name": "nope", "args": {}})
        self.assertEqual(h.read(), {"type": "tool_result", "id": "3", "content": [{"type": "text", "text": "extension t has no tool 'nope'"}], "is_error": True})
        h.send({"type": "command_invoked", "id": "4", "name": "hi", "args": "Ada"})
        self.assertEqual(h.read(), {"type": "command_response", "id": "4", "action": "insert", "insert": "hi Ada"})
        h.send({"type": "command_invoked", "id": "5", "name": "nope", "args": ""})
        self.assertEqual(h.read(), {"type": "command_response", "id": "5", "action": "noop", "error": "extension t has no command 'nope'"})
        h.send({"type": "event_intercept", "id": "6", "event": "tool_call", "tool_id": "c", "tool_name": "bash", "tool_args": {}})
        self.assertEqual(h.read(), {"type": "event_intercept_response", "id": "6", "block": True, "reason": "no bash"})
        h.send({"type": "event_intercept", "id": "7", "event": "tool_call", "tool_id": "c", "tool_name": "read", "tool_args": {}})
        self.assertEqual(h.read(), {"type": "event_intercept_response", "id": "7", "modified_args": {"x": 1}})
        h.send({"type": "event_intercept", "id": "8", "event": "assistant_message", "text": "the secret"})
        self.assertEqual(h.read(), {"type": "event_intercept_response", "id": "8", "replace_text": "the [redacted]"})
        # An intercept the extension did not ask for is allowed.
        h.send({"type": "event_intercept", "id": "9", "event": "turn_start", "step": 1})
        self.assertEqual(h.read(), {"type": "event_intercept_response", "id": "9"})

    def test_a_cancelled_request_is_not_answered(self):
        h = self.h
        h.send({"type": "tool_call", "id": "w", "name": "wait", "args": {}})
        time.sleep(0.1)
        h.send({"type": "cancel", "id": "w", "reason": "aborted"})
        # The next answer is the next request's: the cancelled one's never
        # comes.
        h.send({"type": "tool_call", "id": "after", "name": "echo", "args": {"text": "y"}})
        self.assertEqual(h.read()["id"], "after")
        h.send({"type": "shutdown"})
        self.assertEqual(h.read(), {"type": "shutdown_ack"})
        with self.assertRaises(EOFError):
            h.read()

    def test_pushes_after_ready(self):
        self.ext.notify("hello there", level="success")
        self.assertEqual(self.h.read(), {"type": "notify", "level": "success", "message": "hello there"})
        self.ext.render_panel("p", title="T", lines=["a"])
        self.assertEqual(self.h.read(), {"type": "panel_render", "panel_id": "p", "title": "T", "lines": ["a"]})
        self.ext.close_panel("p")
        self.assertEqual(self.h.read(), {"type": "panel_close", "panel_id": "p"})

        @self.ext.command
        def later(args):
            return None

        self.assertEqual(self.h.read(), {"type": "register_command", "name": "later"})
        self.h.send({"type": "command_invoked", "id": "l", "name": "later", "args": ""})
        self.assertEqual(self.h.read(), {"type": "command_response", "id": "l", "action": "noop"})


class ChainTest(unittest.TestCase):
    def test_a_second_intercept_is_chained(self):
        ext = Extension("t")

        @ext.intercept_tool_call
        def first(call):
            if call.tool_name == "bash":
                return Block("no bash")
            return Rewrite(args={"path": "/safe"})

        @ext.intercept_tool_call
        def second(call):
            return None if call.tool_args == {"path": "/safe"} else Block("saw %r" % (call.tool_args,))

        @ext.intercept_turn_start
        def strict(step):
            return Block("first")

        @ext.intercept_turn_start
        def lenient(step):
            return None

        @ext.intercept_assistant_message
        def secret(text):
            return text.replace("SECRET", "[redacted]")

        @ext.intercept_assistant_message
        def token(text):
            return text.replace("TOKEN", "[token]")

        h = Host(self, ext)
        h.send(ACK)
        h.read_until("ready")
        h.send({"type": "event_intercept", "id": "1", "event": "tool_call", "tool_id": "c", "tool_name": "bash", "tool_args": {}})
        self.assertEqual(h.read(), {"type": "event_intercept_response", "id": "1", "block": True, "reason": "no bash"})
        h.send({"type": "event_intercept", "id": "2", "event": "tool_call", "tool_id": "c", "tool_name": "ls", "tool_args": {"path": "/"}})
        self.assertEqual(h.read(), {"type": "event_intercept_response", "id": "2", "modified_args": {"path": "/safe"}})
        h.send({"type": "event_intercept", "id": "3", "event": "turn_start", "step": 1})
        self.assertEqual(h.read(), {"type": "event_intercept_response", "id": "3", "block": True, "reason": "first"})
        h.send({"type": "event_intercept", "id": "4", "event": "assistant_message", "text": "SECRET TOKEN"})
        self.assertEqual(h.read(), {"type": "event_intercept_response", "id": "4", "replace_text": "[redacted] [token]"})


class NotRunningTest(unittest.TestCase):
    def test_notify_before_run(self):
        with self.assertRaises(zot_ext.NotRunningError):
            Extension("x").notify("too early")


if __name__ == "__main__":
    unittest.main()

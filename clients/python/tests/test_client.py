"""Tests of zot_client.Client against the real `zot rpc` on the scripted
provider, plus a stand-in server for what zot does not do today.

Run from clients/python: ZOT_BIN=/path/to/zot python3 -m unittest discover -s tests -v
"""

import base64
import json
import os
import subprocess
import sys
import unittest

from harness import (
    ECHO_SCRIPT,
    EVENT_TIMEOUT,
    HERE,
    RESPONSE_TIMEOUT,
    SLEEP_SCRIPT,
    ZOT,
    ZotTestCase,
    event_types,
    requires_zot,
    text_of,
)

import zot_client as z

# A 10 MiB "PNG": the signature zot sniffs, then padding.
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
TEN_MIB = 10 * 1024 * 1024


def big_png(size: int) -> bytes:
    return PNG_SIGNATURE + b"\0" * (size - len(PNG_SIGNATURE))


class FakeServerTest(ZotTestCase):
    """Frames zot may send in the future or on a bad day (no zot needed)."""

    def fake(self, **kw) -> z.Client:
        c = z.Client(
            command=[sys.executable, str(HERE / "fake_zot.py")],
            timeout=RESPONSE_TIMEOUT,
            event_timeout=EVENT_TIMEOUT,
            **kw,
        )
        self.addCleanup(c.close, 5)
        return c

    def test_unknown_events_and_fields_pass_through(self):
        unrouted = []
        c = self.fake(on_unrouted=unrouted.append)
        events = c.prompt("passthrough").collect()
        self.assertEqual(event_types(events), ["text_delta", "zz_future_event", "turn_start", "done"])
        delta, future, broken, done = events
        self.assertIsInstance(delta, z.TextDeltaEvent)
        self.assertEqual(delta.delta, "a\u2028b", "U+2028 must not split the line")
        self.assertEqual(delta.extra, {"zz_new_field": {"x": 1}})
        self.assertIsInstance(future, z.UnknownEvent)
        self.assertEqual(future.raw["payload"], [1, 2])
        self.assertEqual(future.raw["prompt_id"], 1)
        # A known event without its required field arrives as an unknown one.
        self.assertIsInstance(broken, z.UnknownEvent)
        self.assertIsInstance(done, z.DoneEvent)
        self.assertEqual([type(e) for e in unrouted], [z.ExtNotifyEvent])
        problems = [str(e) for e in c.protocol_errors]
        self.assertEqual(len(problems), 2, problems)
        self.assertIn("turn_start", problems[0])
        self.assertIn("not JSON", problems[1])

    def test_response_without_id_goes_to_oldest_request(self):
        c = self.fake()
        resp = c.request({"type": "ping", "fake_no_id": True})
        self.assertEqual((resp.success, resp.id, resp.code), (False, None, "line_too_long"))
        after = c.request({"type": "ping"})
        self.assertTrue(after.success)
        self.assertIsNotNone(after.id, "the next response is matched by its id again")
        self.assertEqual(c.protocol_errors, [])

    def test_exit_before_done_ends_the_stream(self):
        c = self.fake()
        stream = c.prompt("die")
        self.assertIsInstance(next(stream), z.TurnStartEvent)
        with self.assertRaises(z.ZotClosedError) as cm:
            next(stream)
        self.assertEqual(cm.exception.returncode, 3)
        with self.assertRaises(z.ZotClosedError):
            c.ping()

    def test_stderr_sinks(self):
        lines = []
        c = z.Client(
            command=[sys.executable, "-c", "import sys; sys.stderr.write('one\\ntwo\\n')"],
            stderr=lines.append,
        )
        self.assertEqual(c.close(5), 0)
        self.assertEqual(lines, ["one", "two"])
        with self.assertRaises(ValueError):
            z.Client(command=[sys.executable, "-c", ""], stderr=subprocess.STDOUT)


class ParserTest(unittest.TestCase):
    """The generated parsers keep what they do not know."""

    def test_parse_event_unknown_type(self):
        ev = z.parse_event({"type": "zz_new", "seq": 1, "data": [1]})
        self.assertIsInstance(ev, z.UnknownEvent)
        self.assertEqual(ev.to_dict(), {"type": "zz_new", "seq": 1, "data": [1]})

    def test_zot_error_fields(self):
        e = z.ZotError("busy", "clear: a prompt is running", "clear")
        self.assertEqual((e.code, e.message, e.command), ("busy", "clear: a prompt is running", "clear"))
        self.assertIn("busy", str(e))


@requires_zot
class PromptTest(ZotTestCase):
    def test_full_prompt_with_tools(self):
        c = self.client()
        stream = c.prompt("show me")
        self.assertTrue(stream.started)
        self.assertFalse(stream.queued)
        self.assertIsNone(stream.position)
        events = stream.collect()
        types = event_types(events)

        self.assertIsInstance(events[0], z.UserMessageEvent)
        self.assertEqual(events[0].content[0], z.TextBlock(text="show me"))
        self.assertIsInstance(events[-1], z.DoneEvent)
        self.assertEqual(types.count("done"), 1)
        self.assertNotIn("error", types)
        self.assertTrue(all(e.prompt_id == stream.id for e in events))
        seqs = [e.seq for e in events]
        self.assertEqual(seqs, sorted(set(seqs)), "seq must increase")
        for e in events:
            self.assertNotIsInstance(e, z.UnknownEvent)

        starts = [e.step for e in events if isinstance(e, z.TurnStartEvent)]
        self.assertEqual(starts, [1, 2])
        stops = [e.stop for e in events if isinstance(e, z.TurnEndEvent)]
        self.assertEqual(stops, ["tool_use", "end_turn"])

        (call,) = [e for e in events if isinstance(e, z.ToolCallEvent)]
        (result,) = [e for e in events if isinstance(e, z.ToolResultEvent)]
        self.assertEqual(call.name, "bash")
        self.assertIn("echo hello from zot", call.args["command"])
        self.assertEqual(result.id, call.id)
        self.assertFalse(result.is_error)
        self.assertIn("hello from zot", "".join(b.text for b in result.content if isinstance(b, z.TextBlock)))
        streamed_args = "".join(e.delta for e in events if isinstance(e, z.ToolUseArgsEvent))
        self.assertEqual(json.loads(streamed_args), call.args)

        # The documented order within the first step, then the tool.
        first = {t: types.index(t) for t in (
            "turn_start", "assistant_start", "text_delta", "usage",
            "assistant_message", "tool_call", "turn_end", "tool_result",
        )}
        order = sorted(first, key=first.get)
        self.assertEqual(order, [
            "turn_start", "assistant_start", "text_delta", "usage",
            "assistant_message", "tool_call", "turn_end", "tool_result",
        ])
        self.assertTrue(text_of(events))
        usages = [e for e in events if isinstance(e, z.UsageEvent)]
        self.assertEqual(len(usages), 2)
        self.assertIsInstance(usages[-1].cumulative, z.Usage)
        self.assertGreater(usages[-1].cumulative.cost_usd, 0)

        again = c.prompt("again").collect()
        self.assertEqual(text_of(again), "You said: again")
        self.assertLess(seqs[-1], again[0].seq)

    def test_session_defaults(self):
        c = self.client()
        caps = c.get_capabilities()
        self.assertEqual(caps.provider, "scripted")
        self.assertIn("cost_budget", caps.features)
        self.assertEqual(c.get_config().model, "scripted")
        cfg = c.patch_config({"max_steps": 3, "max_cost_usd": 0.5})
        self.assertEqual((cfg.max_steps, cfg.max_cost_usd), (3, 0.5))
        cfg = c.patch_config({"max_cost_usd": None})
        self.assertIsNone(cfg.max_cost_usd)
        self.assertEqual(c.set_config({"model": "scripted", "max_steps": 7}).max_steps, 7)
        with self.assertRaises(z.ZotError) as e:
            c.patch_config({"max_steps": 0})
        self.assertEqual(e.exception.code, "invalid_params")
        with self.assertRaises(z.ZotError) as e:
            c.prompt("hi", max_cost_usd=-1)
        self.assertEqual(e.exception.code, "invalid_params")
        c.prompt("hi", max_steps=2, max_tokens=100).collect()
        self.assertEqual(c.get_config().max_steps, 7)

    def test_set_sandbox(self):
        c = self.client()
        self.assertIn("sandbox", c.get_capabilities().features)
        sb = c.set_sandbox(mode="read-only", network=False)
        self.assertIsInstance(sb, z.SandboxState)
        self.assertEqual((sb.mode, sb.network, sb.writable or []), ("read-only", False, []))
        self.assertEqual(c.get_state().sandbox.mode, "read-only")
        sb = c.set_sandbox(network=True)
        self.assertEqual((sb.mode, sb.network), ("read-only", True))
        sb = c.set_sandbox(mode="workspace-write")
        self.assertEqual((sb.mode, sb.network, sb.writable[0]), ("workspace-write", True, self.tmp))
        with self.assertRaises(z.ZotError) as e:
            c.set_sandbox(mode="sometimes")
        self.assertEqual(e.exception.code, "invalid_params")
        self.assertEqual(c.get_state().sandbox.mode, "workspace-write")

    def test_every_command(self):
        c = self.client()
        hello = c.hello()
        self.assertIsInstance(hello, z.HelloResult)
        self.assertEqual((hello.protocol_version, hello.provider, hello.model), (1, "scripted", "scripted"))
        self.assertEqual(c.ping(), z.PingResult(pong=True))
        models = c.get_models()
        self.assertIn("scripted", [m.id for m in models.models])
        self.assertEqual(c.set_model("scripted").model, "scripted")
        self.assertEqual(c.set_mode("read_only").mode, "read_only")
        self.assertEqual(c.get_state().mode, "read_only")
        self.assertEqual(c.set_mode("auto").modes, ["ask", "accept_edits", "auto", "read_only"])

        state = c.get_state()
        self.assertIsInstance(state, z.StateResult)
        self.assertEqual((state.provider, state.model, state.cwd), ("scripted", "scripted", self.tmp))
        self.assertEqual((state.busy, state.message_count), (False, 0))
        self.assertEqual(c.get_messages().messages, [])

        c.prompt("one").collect()
        c.prompt("two").collect()
        msgs = c.get_messages().messages
        self.assertEqual(msgs[0].role, "user")
        self.assertIn("tool", [m.role for m in msgs])
        self.assertEqual(msgs[-1].role, "assistant")
        self.assertEqual(c.get_state().message_count, len(msgs))
        # Undo of the second turn (it changed no file), then it again.
        undone = c.undo(2)
        self.assertIsInstance(undone, z.UndoResult)
        self.assertEqual((undone.turn, undone.files), (2, []))
        self.assertEqual(c.get_state().message_count, undone.message_count)
        self.assertEqual(c.get_messages().messages[:undone.message_count], msgs[:undone.message_count])
        c.prompt("two").collect()

        compaction = c.compact("keep the file names")
        self.assertTrue(compaction.started)
        events = compaction.collect()
        self.assertEqual(event_types(events)[-2:], ["compact_done", "done"])
        self.assertTrue(events[-2].summary)
        self.assertTrue(all(e.prompt_id == compaction.id for e in events))

        self.assertEqual(c.abort(), z.AbortResult(aborted=False, dropped=0))
        self.assertIsNone(c.clear())
        self.assertEqual(c.get_messages().messages, [])
        self.assertEqual(c.get_state().usage.cost_usd, 0)

        raw = c.request({"type": "zz_no_such_command"})
        self.assertFalse(raw.success)
        self.assertEqual(raw.code, "unknown_command")
        self.assertEqual(c.close(), 0)

    def test_failures_raise_zot_error(self):
        c = self.client()
        cases = [
            (lambda: c.set_model(""), "unknown_model", "set_model"),
            (lambda: c.prompt(""), "invalid_params", "prompt"),
            (lambda: c.prompt("look", images=[b"not an image"]), "invalid_image", "prompt"),
            (lambda: c.undo(), "not_found", "undo"),
        ]
        for call, code, command in cases:
            with self.subTest(code=code):
                with self.assertRaises(z.ZotError) as cm:
                    call()
                self.assertEqual(cm.exception.code, code)
                self.assertEqual(cm.exception.command, command)
                self.assertTrue(cm.exception.message)
        self.assertTrue(c.ping().pong, "failures must not end the session")

    def test_busy(self):
        c = self.client(SLEEP_SCRIPT)
        stream = c.prompt("sleep")
        for call, command in ((c.clear, "clear"), (lambda: c.set_model("scripted"), "set_model")):
            with self.assertRaises(z.ZotError) as cm:
                call()
            self.assertEqual((cm.exception.code, cm.exception.command), ("busy", command))
        self.assertTrue(c.ping().pong)
        self.assertTrue(c.get_state().busy)
        self.assertTrue(c.abort().aborted)
        self.assertIsInstance(stream.collect()[-1], z.DoneEvent)

    def test_queued_prompt_gets_its_own_done(self):
        script = {
            "turns": [
                {"steps": [
                    {"tool_calls": [{"name": "bash", "args": {"command": "sleep 1"}}]},
                    {"text": "Slept."},
                ]},
                {"steps": [{"echo": True}]},
            ]
        }
        c = self.client(script)
        first = c.prompt("first")
        second = c.prompt("second")
        self.assertTrue(first.started)
        self.assertFalse(second.started)
        self.assertTrue(second.queued)
        self.assertEqual(second.position, 1)
        a, b = first.collect(), second.collect()
        self.assertEqual(text_of(a), "Slept.")
        self.assertEqual(text_of(b), "You said: second")
        self.assertEqual(event_types(a).count("done"), 1)
        self.assertEqual(event_types(b).count("done"), 1)
        self.assertLess(a[-1].seq, b[0].seq, "queued work starts after the first is done")

    def test_abort_mid_tool(self):
        c = self.client(SLEEP_SCRIPT)
        stream = c.prompt("sleep")
        seen = []
        for ev in stream:
            seen.append(ev)
            if isinstance(ev, z.TurnEndEvent):
                self.assertEqual(ev.stop, "tool_use")
                break
        # The tool now runs `sleep 30`; the event timeout (a hang guard
        # shorter than that) fails the test if abort does not end it.
        self.assertEqual(c.abort(), z.AbortResult(aborted=True, dropped=0))
        rest = stream.collect()
        self.assertEqual(event_types(rest)[-2:], ["turn_end", "done"])
        self.assertEqual(rest[-2].stop, "aborted")
        results = [e for e in seen + rest if isinstance(e, z.ToolResultEvent)]
        self.assertEqual([r.id for r in results], ["call_sleep"])
        self.assertTrue(results[0].is_error)
        self.assertNotIn("error", event_types(rest), "an abort is not an error")
        # The session goes on: the next prompt runs normally.
        self.assertEqual(text_of(c.prompt("after").collect()), "You said: after")

    def test_abort_all_drops_the_queue(self):
        c = self.client(SLEEP_SCRIPT)
        running = c.prompt("sleep")
        waiting = c.compact()
        self.assertEqual(waiting.position, 1)
        self.assertEqual(c.abort(all=True), z.AbortResult(aborted=True, dropped=1))
        for s in (running, waiting):
            events = s.collect()
            self.assertEqual(event_types(events)[-2:], ["turn_end", "done"])
            self.assertEqual(events[-2].stop, "aborted")
        self.assertFalse(c.get_state().busy)

    def test_cancel_one_prompt_by_id(self):
        c = self.client(SLEEP_SCRIPT)
        running = c.prompt("sleep")
        waiting = c.prompt("second")
        behind = c.prompt("third")
        self.assertEqual((waiting.position, behind.position), (1, 2))
        # The queued prompt alone is dropped: the running one goes on, the
        # one behind it keeps its turn.
        self.assertEqual(waiting.cancel(), z.AbortResult(aborted=False, dropped=1))
        self.assertEqual(c.abort(prompt_id=running.id), z.AbortResult(aborted=True, dropped=0))
        events = running.collect()
        self.assertEqual(event_types(events)[-2:], ["turn_end", "done"])
        self.assertEqual(events[-2].stop, "aborted")
        events = waiting.collect()
        self.assertEqual(event_types(events), ["turn_end", "done"], "dropped work never ran")
        self.assertEqual(events[0].stop, "aborted")
        self.assertEqual(text_of(behind.collect()), "You said: third")
        # Work that has ended is left alone, and so is whatever runs now.
        later = c.prompt("fourth")
        self.assertEqual(running.cancel(), z.AbortResult(aborted=False, dropped=0))
        self.assertEqual(text_of(later.collect()), "You said: fourth")
        with self.assertRaises(z.ZotError) as cm:
            c.abort(all=True, prompt_id=later.id)
        self.assertEqual(cm.exception.code, "invalid_params")

    def test_ten_mib_image_round_trips(self):
        c = self.client(ECHO_SCRIPT)
        data = big_png(TEN_MIB)
        events = c.prompt("what is this?", images=[z.ImageInput(mime_type="image/png", data=base64.b64encode(data).decode())]).collect()
        user = events[0]
        self.assertIsInstance(user, z.UserMessageEvent)
        images = [b for b in user.content if isinstance(b, z.ImageBlock)]
        self.assertEqual(len(images), 1)
        self.assertEqual((images[0].mime_type, images[0].bytes), ("image/png", TEN_MIB))
        self.assertEqual(text_of(events), "You said: what is this?")
        # Raw bytes work too (encoded by the client, without a claimed type).
        events = c.prompt("again", images=[data]).collect()
        self.assertEqual([b.bytes for b in events[0].content if isinstance(b, z.ImageBlock)], [TEN_MIB])
        stored = [b for m in c.get_messages().messages for b in m.content if isinstance(b, z.ImageBlock)]
        self.assertEqual([b.bytes for b in stored], [TEN_MIB, TEN_MIB])

    def test_line_too_long_is_answered_and_skipped(self):
        c = self.client(ECHO_SCRIPT, "--max-line-bytes", "4096")
        with self.assertRaises(z.ZotError) as cm:
            c.prompt("big", images=[big_png(8192)])
        self.assertEqual(cm.exception.code, "line_too_long")
        self.assertTrue(c.ping().pong)
        self.assertEqual(text_of(c.prompt("small").collect()), "You said: small")

    def test_line_separators_inside_strings(self):
        c = self.client(ECHO_SCRIPT)
        message = "a\u2028b\u2029c\x85d\re"
        events = c.prompt(message).collect()
        self.assertEqual(text_of(events), "You said: " + message)
        self.assertEqual(c.protocol_errors, [])


@requires_zot
class AuthTest(ZotTestCase):
    TOKEN = "test-token-not-a-secret"

    def test_right_token(self):
        c = self.client(env={"ZOTCORE_RPC_TOKEN": self.TOKEN})
        self.assertEqual(c.hello(self.TOKEN).protocol_version, 1)
        self.assertTrue(c.ping().pong)
        self.assertEqual(c.close(), 0)

    def test_wrong_token_ends_the_session(self):
        c = self.client(env={"ZOTCORE_RPC_TOKEN": self.TOKEN})
        with self.assertRaises(z.ZotError) as cm:
            c.hello("wrong")
        self.assertEqual(cm.exception.code, "invalid_token")
        self.assertEqual(c.wait(RESPONSE_TIMEOUT), 1)
        with self.assertRaises(z.ZotClosedError):
            c.ping()

    def test_missing_hello(self):
        c = self.client(env={"ZOTCORE_RPC_TOKEN": self.TOKEN})
        with self.assertRaises(z.ZotError) as cm:
            c.ping()
        self.assertEqual(cm.exception.code, "auth_required")
        self.assertEqual(c.wait(RESPONSE_TIMEOUT), 1)


@requires_zot
class RawStdoutTest(ZotTestCase):
    """Without the client: stdout holds JSON lines only, stderr is apart."""

    def test_every_stdout_line_is_json(self):
        lines = [
            {"id": "a", "type": "hello"},
            {"id": 7, "type": "prompt", "message": "run it"},
            {"id": 8, "type": "prompt", "message": "sep\u2028arated"},
            {"id": 9, "type": "get_messages"},
        ]
        stdin = b"".join(json.dumps(m).encode() + b"\n" for m in lines) + b"not json\n"
        env = dict(os.environ)
        env.pop("ZOTCORE_RPC_TOKEN", None)
        proc = subprocess.run(
            [ZOT, "rpc", *self.zot_flags()],
            input=stdin,
            capture_output=True,
            env=env,
            cwd=self.tmp,
            timeout=60,
        )
        self.assertEqual(proc.returncode, 0, proc.stderr.decode(errors="replace"))
        self.assertTrue(proc.stdout.endswith(b"\n"))
        frames = [json.loads(line) for line in proc.stdout[:-1].split(b"\n")]
        self.assertTrue(all(isinstance(f, dict) for f in frames))
        responses = [f for f in frames if f["type"] == "response"]
        self.assertEqual([r.get("id") for r in responses], ["a", 7, 8, 9, None])
        self.assertEqual(responses[-1]["code"], "malformed_json")
        dones = [f["prompt_id"] for f in frames if f["type"] == "done"]
        self.assertEqual(dones, [7, 8])
        text = "".join(f["delta"] for f in frames if f["type"] == "text_delta" and f["prompt_id"] == 8)
        self.assertEqual(text, "You said: sep\u2028arated")


if __name__ == "__main__":
    unittest.main()


class ResultTest(ZotTestCase):
    @requires_zot
    def test_result_and_invalid_output(self):
        script = {"turns": [
            {"steps": [{"text": '{"n": 2}'}]},
            {"steps": [{"text": "not json"}]},
        ]}
        schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
        with self.client(script) as zot:
            res = zot.run("two?", output_schema=schema)
            self.assertEqual(res.structured, {"n": 2})
            self.assertEqual((res.stop, res.text, res.turns), ("end_turn", '{"n": 2}', 1))
            with self.assertRaises(z.ZotError) as cm:
                zot.prompt("again", output_schema=schema, output_retries=0).result()
            self.assertEqual(cm.exception.code, "invalid_output")
            self.assertEqual(cm.exception.result.stop, "error")
            self.assertEqual(cm.exception.result.text, "not json")
            with self.assertRaises(z.ZotError) as cm:
                zot.prompt("bad", output_schema={"type": 5})
            self.assertEqual(cm.exception.code, "invalid_params")

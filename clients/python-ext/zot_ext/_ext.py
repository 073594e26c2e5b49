"""The extension runtime: what an Extension registers and how it answers
zot over the extension protocol (docs/extensions.md).

One thread reads the host's frames; every request (a tool call, a command,
an intercept) runs on a thread of its own with a Request that says when
zot gave up on it; events, panel keys and panel closes run one at a time,
in the order they came, on one more thread. Every frame goes out through
one lock, one JSON object per line.
"""

from __future__ import annotations

import base64
import dataclasses
import inspect
import json
import os
import sys
import threading
import time
import traceback
from typing import IO, Any, Callable, Dict, List, Optional, Sequence, TypeVar, Union

from . import types as t

__all__ = [
    "Block",
    "CommandError",
    "Display",
    "Extension",
    "Insert",
    "NotRunningError",
    "Noop",
    "Prompt",
    "Request",
    "Rewrite",
    "ToolError",
    "ToolResult",
    "image",
]

F = TypeVar("F", bound=Callable[..., Any])

# How long zot waits for each kind of answer (docs/extensions.md,
# "Timeouts and failure rules"); a Request's deadline is counted from when
# the request arrived.
TOOL_TIMEOUT = 60.0
COMMAND_TIMEOUT = 30.0
INTERCEPT_TIMEOUT = 5.0


# ---- what handlers return or raise ---------------------------------------------


class ToolError(Exception):
    """Raised by a tool: the model gets the message as a failed result."""


class CommandError(Exception):
    """Raised by a command: zot shows the message as the command's error."""


class NotRunningError(RuntimeError):
    """notify, render_panel or close_panel was called while the extension
    was not serving zot (before run, or after it returned)."""


class ToolResult:
    """A tool's result: content blocks (text and images) and whether the
    tool failed. A tool may also return a str (one text block), one
    content block or a list of them."""

    def __init__(self, content: Union[str, t.ToolContent, Sequence[Any], None] = None, is_error: bool = False):
        self.content = _content(content)
        self.is_error = is_error


def image(data: bytes, mime_type: str = "image/png") -> t.ImageContent:
    """An image block of a tool's result (PNG, JPEG, GIF or WebP bytes)."""
    return t.ImageContent(mime_type=mime_type, data=base64.b64encode(data).decode("ascii"))


class _Action:
    action: t.CommandAction = "noop"

    def __init__(self, text: str = ""):
        self.text = text

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.text!r})"


class Prompt(_Action):
    """A command's answer: submit text as a user message (the agent runs a
    turn on it)."""

    action = "prompt"


class Insert(_Action):
    """A command's answer: put text into the user's input, unsent."""

    action = "insert"


class Display(_Action):
    """A command's answer: show text as a note, with no model call. A
    command that returns a str displays it."""

    action = "display"


class Noop(_Action):
    """A command's answer: nothing to do (also what returning None means)."""

    action = "noop"


class Block:
    """An intercept's verdict: refuse the tool call, turn or message. The
    model (for a tool call) or the user sees reason."""

    def __init__(self, reason: str = ""):
        self.reason = reason

    def __repr__(self) -> str:
        return f"Block({self.reason!r})"


class Rewrite:
    """An intercept's verdict: let it go on changed. args are the
    arguments a tool call runs with instead; text is the text clients are
    shown instead of an assistant message's."""

    def __init__(self, args: Optional[Dict[str, Any]] = None, text: Optional[str] = None):
        self.args = args
        self.text = text

    def __repr__(self) -> str:
        return f"Rewrite(args={self.args!r}, text={self.text!r})"


class Request:
    """A request zot is waiting on: its id, and whether zot gave up on it.

    A handler that takes a second parameter gets its Request. zot gives up
    when the request times out or the prompt is aborted (``cancelled`` is
    set, ``reason`` is ``"timeout"`` or ``"aborted"``), and when it stops
    the extension (``"shutdown"``); an answer after that is not sent.
    ``deadline`` is when zot's wait ends, on the ``time.monotonic`` clock.
    """

    def __init__(self, id: str, timeout: float):
        self.id = id
        self.deadline = time.monotonic() + timeout
        self.cancelled = threading.Event()
        self.reason = ""

    def remaining(self) -> float:
        """Seconds until the deadline (0 once it passed)."""
        return max(0.0, self.deadline - time.monotonic())

    def _cancel(self, reason: str) -> None:
        if not self.cancelled.is_set():
            self.reason = reason or "cancelled"
            self.cancelled.set()


# ---- the extension -------------------------------------------------------------------


class Extension:
    """One extension: what it offers zot and the handlers that answer.

    Declare everything with the decorators, then call :meth:`run`::

        ext = Extension("shout", "1.0.0")

        @ext.tool(schema={"type": "object", "properties": {"text": {"type": "string"}}})
        def shout(args):
            "Upper-case the text."
            return args["text"].upper()

        ext.run()

    name must be the manifest's name; log is where :meth:`log` writes
    (default stderr). The methods are safe to call from any thread, also
    while the extension runs.
    """

    def __init__(self, name: str, version: str = "", *, log: Optional[IO[str]] = None):
        self.name = name
        self.version = version
        self._mu = threading.RLock()
        self._commands: Dict[str, Callable[..., Any]] = {}
        self._tools: Dict[str, Callable[..., Any]] = {}
        self._tool_timeouts: Dict[str, float] = {}
        self._events: Dict[str, List[Callable[..., Any]]] = {}
        self._intercepts: Dict[str, List[Callable[..., Any]]] = {}
        self._panel_key: Optional[Callable[..., Any]] = None
        self._panel_close: Optional[Callable[..., Any]] = None
        self._starts: List[Callable[..., Any]] = []
        self._regs: List[Any] = []  # registrations not written yet
        self._live = False  # ready was sent: registrations go out at once
        self._started = False
        self._session: Optional[_Session] = None
        self._host: Optional[t.HelloAckFrame] = None
        self._log = log

    # ---- registration --------------------------------------------------------------

    def tool(
        self,
        description: Union[str, Callable[..., Any], None] = None,
        *,
        name: Optional[str] = None,
        schema: Optional[Dict[str, Any]] = None,
        timeout: Optional[float] = None,
        read_only: bool = False,
    ) -> Any:
        """Decorates a tool the model can call: ``fn(args)`` or
        ``fn(args, request)``, args being the JSON object the model wrote.

        It returns a str, a content block (:func:`image`), a list of them or
        a :class:`ToolResult`; raising :class:`ToolError` (or any exception)
        gives the model a failed result. name defaults to the function's,
        description to its docstring, schema (the arguments' JSON Schema) to
        any object; timeout is how long zot waits, in seconds (default 60).
        read_only says the tool changes nothing (it only reads or computes):
        it then runs in a session's read-only mode and is not asked about;
        any other tool is refused there, and asked about where the mode
        asks before commands.
        """

        def register(fn: F) -> F:
            tool_name = name or fn.__name__
            desc = description if isinstance(description, str) else inspect.getdoc(fn) or ""
            frame = t.RegisterToolFrame(name=tool_name, description=desc or None, schema=schema)
            if timeout is not None:
                frame.timeout_ms = max(1, int(timeout * 1000))
            if read_only:
                frame.read_only = True
            with self._mu:
                self._tools[tool_name] = fn
                self._tool_timeouts[tool_name] = timeout if timeout is not None else TOOL_TIMEOUT
                self._register(frame)
            return fn

        if callable(description):
            return register(description)
        return register

    def command(self, description: Union[str, Callable[..., Any], None] = None, *, name: Optional[str] = None) -> Any:
        """Decorates a slash command: ``fn(args)`` or ``fn(args, request)``,
        args being what the user typed after its name (a str, maybe empty).

        It returns :class:`Prompt`, :class:`Insert`, :class:`Display`, a
        str (displayed), a :class:`~zot_ext.types.Panel` (opened), or None;
        raising :class:`CommandError` (or any exception) shows the message
        as the command's error. name defaults to the function's, description
        to its docstring.
        """

        def register(fn: F) -> F:
            cmd = name or fn.__name__
            desc = description if isinstance(description, str) else inspect.getdoc(fn) or ""
            with self._mu:
                self._commands[cmd] = fn
                self._register(t.RegisterCommandFrame(name=cmd, description=desc or None))
            return fn

        if callable(description):
            return register(description)
        return register

    def on(self, event: t.EventName) -> Callable[[F], F]:
        """Decorates an observer of a lifecycle event (``session_start``,
        ``turn_start``, ``turn_end``, ``tool_call``, ``assistant_message``):
        ``fn(event)`` with the :class:`~zot_ext.types.EventFrame`. Events are
        handled one at a time, in the order they happened."""

        def register(fn: F) -> F:
            with self._mu:
                self._events.setdefault(event, []).append(fn)
                self._resubscribe()
            return fn

        return register

    def intercept_tool_call(self, fn: F) -> F:
        """Decorates the judge of every tool call before it runs:
        ``fn(call)`` with the :class:`~zot_ext.types.EventInterceptFrame`
        (``tool_name``, ``tool_args``, ``tool_id``). It returns None (allow),
        :class:`Block` or ``Rewrite(args=...)``. An exception blocks."""
        return self._intercept("tool_call", fn)

    def intercept_turn_start(self, fn: F) -> F:
        """Decorates the judge of every model call: ``fn(step)``, step
        counting the calls of one prompt from 1. It returns None or
        :class:`Block`."""
        return self._intercept("turn_start", fn)

    def intercept_assistant_message(self, fn: F) -> F:
        """Decorates the judge of every assistant message before clients see
        it: ``fn(text)``. It returns None, :class:`Block` (hide it), a str or
        ``Rewrite(text=...)`` (the text clients see instead)."""
        return self._intercept("assistant_message", fn)

    def on_panel_key(self, fn: F) -> F:
        """Decorates the receiver of keys pressed in the extension's panels:
        ``fn(key)`` with the :class:`~zot_ext.types.PanelKeyFrame`
        (``panel_id``, ``key``, ``text``), one at a time, in order. Redraw
        with :meth:`render_panel`."""
        with self._mu:
            self._panel_key = fn
        return fn

    def on_panel_close(self, fn: F) -> F:
        """Decorates what is told that the user closed a panel:
        ``fn(panel_id)``."""
        with self._mu:
            self._panel_close = fn
        return fn

    def on_start(self, fn: F) -> F:
        """Decorates what runs once zot answered hello, before the extension
        says it is ready: ``fn(host)`` with the
        :class:`~zot_ext.types.HelloAckFrame` (``data_dir``, ``cwd``,
        ``model``, ...). What was declared before :meth:`run` is announced
        before it runs, intercepts included; what it registers goes out
        after it, before ready; zot waits for that ready however long
        on_start takes, up to the extension's start timeout (the manifest's
        ``start_timeout_ms``). An exception ends run."""
        with self._mu:
            self._starts.append(fn)
        return fn

    @property
    def host(self) -> Optional[t.HelloAckFrame]:
        """What zot said in hello_ack; None before it arrived."""
        with self._mu:
            return self._host

    # ---- pushing -----------------------------------------------------------------------

    def notify(self, message: str, level: t.NotifyLevel = "info") -> None:
        """Pushes a notice for the user; level is ``info``, ``success``,
        ``warn`` or ``error``. Called before hello_ack arrived, it waits."""
        self._push(t.NotifyFrame(level=level, message=message))

    def render_panel(
        self,
        panel: Union[t.Panel, str],
        title: Optional[str] = None,
        lines: Optional[List[str]] = None,
        footer: Optional[str] = None,
    ) -> None:
        """Redraws an open panel: a :class:`~zot_ext.types.Panel`, or its id
        and what it shows."""
        if isinstance(panel, t.Panel):
            panel_id, title, lines, footer = panel.id, panel.title, panel.lines, panel.footer
        else:
            panel_id = panel
        self._push(t.PanelRenderFrame(panel_id=panel_id, title=title, lines=list(lines) if lines is not None else None, footer=footer))

    def close_panel(self, panel_id: str) -> None:
        """Closes a panel the extension opened."""
        self._push(t.PanelCloseFrame(panel_id=panel_id))

    def log(self, message: str) -> None:
        """Writes a line to the extension's log: stderr, which zot appends
        to ``$ZOT_HOME/logs/ext-<name>.log``. stdout carries the protocol
        only; while :meth:`run` serves, ``print`` goes to stderr too."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        out = self._log or sys.stderr
        try:
            out.write(f"{stamp} {message}\n")
            out.flush()
        except (OSError, ValueError):
            pass

    # ---- serving -----------------------------------------------------------------------

    def run(self) -> None:
        """Serves zot on stdin and stdout until zot shuts the extension down
        or closes stdin. It may be called once.

        While it runs, stdout is the protocol's alone: ``sys.stdout`` and
        file descriptor 1 (what child processes inherit) go to stderr.
        """
        out_fd = os.dup(sys.stdout.fileno())
        sys.stdout.flush()
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
        saved, sys.stdout = sys.stdout, sys.stderr
        try:
            with os.fdopen(out_fd, "wb") as out:
                self.serve(sys.stdin.buffer, out)
        finally:
            sys.stdout = saved

    def serve(self, reader: IO[bytes], writer: IO[bytes]) -> None:
        """Is :meth:`run` on any pair of binary streams (tests use pipes).
        It returns after ``shutdown`` (answered with ``shutdown_ack``) or at
        the end of reader."""
        with self._mu:
            if self._started:
                raise RuntimeError("zot_ext: run was already called")
            self._started = True
            s = _Session(self, writer)
            self._session = s
            # sends_ready: zot waits for the ready sent after on_start, however
            # long it takes (up to its start timeout).
            s.send(t.HelloFrame(name=self.name, version=self.version or None, capabilities=self._capabilities() or None, sends_ready=True))
            for f in self._regs:
                s.send(f)
            self._regs = []
            # The subscriptions made before run go out now, with hello; what
            # on_start adds goes out after it, before ready.
            s.announced = self._subscribe_frame()
            if s.announced is not None:
                s.send(s.announced)
        try:
            s.loop(reader)
        finally:
            s.close()
            with self._mu:
                self._session = None
                self._live = False

    # ---- internals ---------------------------------------------------------------------

    def _register(self, frame: Any) -> None:
        s = self._session
        if self._live and s is not None:
            s.send(frame)
        else:
            self._regs.append(frame)

    def _intercept(self, event: str, fn: F) -> F:
        """Adds fn to the judges of event. Judges of one event are asked in
        the order they were added: the first block wins, and each judges
        the arguments or text the ones before rewrote."""
        # A second judge of the same event is chained after the first, not
        # put in its place: both guards hold.
        with self._mu:
            self._intercepts.setdefault(event, []).append(fn)
            self._resubscribe()
        return fn

    def _subscribe_frame(self) -> Optional[t.SubscribeFrame]:
        events = sorted(self._events)
        intercept = [e for e in t.INTERCEPT_EVENTS if e in self._intercepts]
        if not events and not intercept:
            return None
        return t.SubscribeFrame(events=events or None, intercept=intercept or None)

    def _resubscribe(self) -> None:
        s = self._session
        if not self._live or s is None:
            return
        s.send(self._subscribe_frame() or t.SubscribeFrame(events=[]))

    def _capabilities(self) -> List[str]:
        caps = []
        if self._commands:
            caps.append("commands")
        if self._tools:
            caps.append("tools")
        if self._events or self._intercepts:
            caps.append("events")
        if self._panel_key or self._panel_close:
            caps.append("panels")
        return caps

    def _push(self, frame: Any) -> None:
        s = self._session
        if s is None:
            raise NotRunningError("zot_ext: the extension is not running")
        while not s.acked.wait(0.05):
            if s.closed.is_set():
                raise NotRunningError("zot_ext: the extension is not running")
        if not s.send(frame):
            raise NotRunningError("zot_ext: the extension is not running")


_STOP = object()


class _Session:
    """One run: the writer, the requests in flight, the ordered queue."""

    def __init__(self, ext: Extension, writer: IO[bytes]):
        self.ext = ext
        self.writer = writer
        self.wlock = threading.Lock()
        self.acked = threading.Event()
        self.closed = threading.Event()
        self.mu = threading.Lock()
        self.announced: Optional[t.SubscribeFrame] = None  # the subscribe sent with hello
        self.inflight: Dict[str, Request] = {}
        self.handlers: List[threading.Thread] = []
        self.queue: List[Any] = []
        self.qcond = threading.Condition()
        self.worker = threading.Thread(target=self._work, name="zot_ext ordered", daemon=True)
        self.worker.start()

    # ---- writing ---------------------------------------------------------------------------

    def send(self, frame: Any) -> bool:
        """Writes one frame; False once the host is gone. A frame JSON
        cannot hold raises TypeError and writes nothing: the frame is at
        fault, not the connection."""
        try:
            data = (json.dumps(frame.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        except (TypeError, ValueError) as e:  # UnicodeEncodeError: a lone surrogate (os.fsdecode's)
            raise TypeError(f"the {frame.TYPE} frame cannot be sent as JSON: {e}") from e
        with self.wlock:
            if self.closed.is_set() and not isinstance(frame, t.ShutdownAckFrame):
                return False
            try:
                self.writer.write(data)
                self.writer.flush()
            except (OSError, ValueError):
                self.closed.set()
                return False
        return True

    # ---- reading ---------------------------------------------------------------------------

    def loop(self, reader: IO[bytes]) -> None:
        ext = self.ext
        while True:
            raw = reader.readline()
            if not raw:
                return  # zot closed stdin: it is gone or stopping us
            raw = raw.strip()
            if not raw:
                continue
            try:
                frame = t.parse_host_frame(json.loads(raw))
            except (ValueError, UnicodeDecodeError) as e:
                ext.log(f"skipped a frame from zot that is not a host frame: {e}")
                continue
            if isinstance(frame, t.UnknownHostFrame):
                ext.log(f"skipped a frame of unknown type {frame.type!r}")
                continue
            if isinstance(frame, t.ShutdownFrame):
                self.cancel_all("shutdown")
                self.send(t.ShutdownAckFrame())
                return
            if not self.acked.is_set():
                if isinstance(frame, t.HelloAckFrame):
                    self.start(frame)
                else:
                    ext.log(f"skipped a {frame.TYPE} frame that came before hello_ack")
                continue
            self.dispatch(frame)

    def start(self, ack: t.HelloAckFrame) -> None:
        """Takes in hello_ack, runs the on_start functions, says ready."""
        ext = self.ext
        with ext._mu:
            ext._host = ack
            starts = list(ext._starts)
        self.acked.set()
        for fn in starts:
            fn(ack)
        with ext._mu:
            for f in ext._regs:
                self.send(f)
            ext._regs = []
            sub = ext._subscribe_frame()
            if _subscription(sub) != _subscription(self.announced):
                self.send(sub or t.SubscribeFrame(events=[]))
            self.send(t.ReadyFrame())
            ext._live = True

    def dispatch(self, frame: Any) -> None:
        ext = self.ext
        if isinstance(frame, t.ToolCallFrame):
            with ext._mu:
                fn = ext._tools.get(frame.name)
                timeout = ext._tool_timeouts.get(frame.name, TOOL_TIMEOUT)
            self.request(frame.id, timeout, lambda req: self.tool(fn, frame, req), lambda e: _tool_failure(ext, frame.name, e, frame.id))
        elif isinstance(frame, t.CommandInvokedFrame):
            with ext._mu:
                fn = ext._commands.get(frame.name)
            self.request(frame.id, COMMAND_TIMEOUT, lambda req: self.command(fn, frame, req), lambda e: _command_failure(ext, frame.name, e, frame.id))
        elif isinstance(frame, t.EventInterceptFrame):
            with ext._mu:
                fns = list(ext._intercepts.get(frame.event, ()))
            self.request(frame.id, INTERCEPT_TIMEOUT, lambda req: _verdict(frame, fns, req), lambda e: _intercept_failure(ext, frame, e))
        elif isinstance(frame, t.CancelFrame):
            with self.mu:
                req = self.inflight.get(frame.id)
            if req is not None:
                req._cancel(frame.reason or "")
        elif isinstance(frame, t.EventFrame):
            with ext._mu:
                fns = list(ext._events.get(frame.event, ()))
            for fn in fns:
                self.enqueue(f"event {frame.event}", fn, frame)
        elif isinstance(frame, t.PanelKeyFrame):
            with ext._mu:
                fn = ext._panel_key
            if fn is not None:
                self.enqueue("panel key", fn, frame)
        elif isinstance(frame, t.HostPanelCloseFrame):
            with ext._mu:
                fn = ext._panel_close
            if fn is not None:
                self.enqueue("panel close", fn, frame.panel_id)
        elif isinstance(frame, t.HelloAckFrame):
            ext.log("ignored a second hello_ack")

    # ---- requests ----------------------------------------------------------------------------

    def request(self, id: str, timeout: float, run: Callable[[Request], Any], fail: Callable[[BaseException], Any]) -> None:
        """Runs a request's handler on a thread of its own and sends its
        answer, unless zot gave the request up meanwhile."""
        req = Request(id, timeout)
        with self.mu:
            old = self.inflight.get(id)
            if old is not None:
                old._cancel("the host reused the request's id")
            self.inflight[id] = req

        def failed(e: BaseException) -> Any:
            if isinstance(e, (ToolError, CommandError)):
                self.ext.log(f"request {id}: {e}")
            else:
                self.ext.log(f"request {id}: {type(e).__name__}: {e}\n{traceback.format_exc().rstrip()}")
            return fail(e)

        def work() -> None:
            try:
                answer = run(req)
            except BaseException as e:  # noqa: BLE001 - every failure is answered
                answer = failed(e)
            with self.mu:
                if self.inflight.get(id) is req:
                    del self.inflight[id]
            if req.cancelled.is_set():
                return  # zot gave the request up: an answer would be dropped
            try:
                self.send(answer)
            except TypeError as e:  # an answer JSON cannot hold fails the request
                self.send(failed(e))

        th = threading.Thread(target=work, name=f"zot_ext request {id}", daemon=True)
        with self.mu:
            self.handlers = [h for h in self.handlers if h.is_alive()]
            self.handlers.append(th)
        th.start()

    def tool(self, fn: Optional[Callable[..., Any]], frame: t.ToolCallFrame, req: Request) -> t.ToolResultFrame:
        if fn is None:
            raise ToolError(f"extension {self.ext.name} has no tool {frame.name!r}")
        args = frame.args if isinstance(frame.args, dict) else {}
        out = _call(fn, args, req)
        if not isinstance(out, ToolResult):
            out = ToolResult(out)
        return t.ToolResultFrame(id=frame.id, content=out.content, is_error=True if out.is_error else None)

    def command(self, fn: Optional[Callable[..., Any]], frame: t.CommandInvokedFrame, req: Request) -> t.CommandResponseFrame:
        if fn is None:
            raise CommandError(f"extension {self.ext.name} has no command {frame.name!r}")
        out = _call(fn, frame.args or "", req)
        r = t.CommandResponseFrame(id=frame.id)
        if out is None:
            r.action = "noop"
        elif isinstance(out, str):
            r.action, r.display = "display", out
        elif isinstance(out, t.Panel):
            r.action, r.open_panel = "open_panel", out
        elif isinstance(out, _Action):
            r.action = out.action
            if out.action in ("prompt", "insert", "display"):
                setattr(r, out.action, out.text)
        else:
            raise CommandError(f"command {frame.name} returned {type(out).__name__}, not an answer")
        return r

    def cancel_all(self, reason: str) -> None:
        with self.mu:
            reqs = list(self.inflight.values())
        for req in reqs:
            req._cancel(reason)

    # ---- the ordered queue ------------------------------------------------------------------

    def enqueue(self, what: str, fn: Callable[..., Any], arg: Any) -> None:
        with self.qcond:
            if self.closed.is_set():
                return
            self.queue.append((what, fn, arg))
            self.qcond.notify()

    def _work(self) -> None:
        while True:
            with self.qcond:
                while not self.queue:
                    self.qcond.wait()
                item = self.queue.pop(0)
            if item is _STOP:
                return
            what, fn, arg = item
            try:
                fn(arg)
            except Exception as e:  # noqa: BLE001 - one bad handler never stops the others
                self.ext.log(f"{what}: {type(e).__name__}: {e}\n{traceback.format_exc().rstrip()}")

    def close(self) -> None:
        """Ends the run: requests are cancelled, the queue stops (what is
        left in it is dropped), and handlers get a moment to return."""
        self.cancel_all("shutdown")
        with self.qcond:
            self.queue = [_STOP]
            self.qcond.notify()
        with self.wlock:
            self.closed.set()
        deadline = time.monotonic() + 1.0
        self.worker.join(max(0.0, deadline - time.monotonic()))
        with self.mu:
            handlers = list(self.handlers)
        for th in handlers:
            th.join(max(0.0, deadline - time.monotonic()))


# ---- helpers -----------------------------------------------------------------------------


def _subscription(f: Optional[t.SubscribeFrame]) -> Any:
    """What f subscribes to, comparable (None and an empty one alike)."""
    if f is None:
        return ((), ())
    return (tuple(f.events or ()), tuple(f.intercept or ()))


def _call(fn: Callable[..., Any], value: Any, req: Request) -> Any:
    """Calls a handler with its value, and the Request when it takes two
    parameters."""
    return fn(value, req) if _takes_request(fn) else fn(value)


def _takes_request(fn: Callable[..., Any]) -> bool:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in params)


def _content(v: Any) -> Optional[List[Any]]:
    """A tool's return value as content blocks."""
    if v is None:
        return None
    if isinstance(v, (str, t.TextContent, t.ImageContent)):
        v = [v]
    if isinstance(v, (bytes, bytearray)):
        raise TypeError("a tool returned bytes: wrap an image in zot_ext.image(data, mime_type)")
    if isinstance(v, dict):
        raise TypeError("a tool returned dict, not text or an image: return json.dumps(value) to give the model JSON")
    out = []
    for b in v:
        if isinstance(b, str):
            out.append(t.TextContent(text=b))
        elif isinstance(b, (t.TextContent, t.ImageContent)):
            out.append(b)
        else:
            raise TypeError(f"a tool returned {type(b).__name__}, not text or an image")
    return out


def _tool_failure(ext: Extension, name: str, e: BaseException, id: str) -> t.ToolResultFrame:
    if isinstance(e, ToolError):
        msg = str(e)
    else:
        msg = f"extension {ext.name}: tool {name} failed: {type(e).__name__}: {e}"
    return t.ToolResultFrame(id=id, content=[t.TextContent(text=msg)], is_error=True)


def _command_failure(ext: Extension, name: str, e: BaseException, id: str) -> t.CommandResponseFrame:
    if isinstance(e, CommandError):
        msg = str(e)
    else:
        msg = f"extension {ext.name}: command {name} failed: {type(e).__name__}: {e}"
    return t.CommandResponseFrame(id=id, action="noop", error=msg or "failed")


def _intercept_failure(ext: Extension, frame: t.EventInterceptFrame, e: BaseException) -> t.EventInterceptResponseFrame:
    # A guard that fails blocks: letting through what it could not judge
    # is the wrong way to fail.
    reason = f"extension {ext.name}: its {frame.event} guard failed: {type(e).__name__}: {e}"
    return t.EventInterceptResponseFrame(id=frame.id, block=True, reason=reason)


def _verdict(frame: t.EventInterceptFrame, fns: Sequence[Callable[..., Any]], req: Request) -> t.EventInterceptResponseFrame:
    """Asks the judges of frame's event in the order they were registered:
    the first block wins; each one after a rewrite judges the rewritten
    arguments or text, and the last rewrite is the verdict's."""
    r = t.EventInterceptResponseFrame(id=frame.id)
    for fn in fns:  # none: not intercepted, allow
        one = _verdict_of(frame, fn, req)
        if one.block:
            return one
        if one.modified_args is not None:
            r.modified_args = one.modified_args
            frame = dataclasses.replace(frame, tool_args=one.modified_args)
        if one.replace_text is not None:
            r.replace_text = one.replace_text
            frame = dataclasses.replace(frame, text=one.replace_text)
    return r


def _verdict_of(frame: t.EventInterceptFrame, fn: Callable[..., Any], req: Request) -> t.EventInterceptResponseFrame:
    r = t.EventInterceptResponseFrame(id=frame.id)
    if frame.event == "turn_start":
        out = _call(fn, frame.step or 0, req)
    elif frame.event == "assistant_message":
        out = _call(fn, frame.text or "", req)
    else:
        out = _call(fn, frame, req)
    if out is None or out is True:
        return r
    if out is False:
        r.block = True
    elif isinstance(out, Block):
        r.block, r.reason = True, out.reason or None
    elif isinstance(out, Rewrite):
        if frame.event == "tool_call" and out.args is not None:
            r.modified_args = out.args
        if frame.event == "assistant_message" and out.text is not None:
            r.replace_text = out.text
    elif isinstance(out, str) and frame.event == "assistant_message":
        r.replace_text = out
    else:
        raise TypeError(f"the {frame.event} intercept returned {type(out).__name__}, not None, Block or Rewrite")
    return r

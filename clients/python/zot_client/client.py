"""A thread-based client for ``zot rpc``.

    from zot_client import Client, TextDeltaEvent

    with Client(args=["--provider", "scripted"]) as zot:
        stream = zot.prompt("hello")
        for ev in stream:
            if isinstance(ev, TextDeltaEvent):
                print(ev.delta, end="")

The client spawns zot, writes one JSON command per line to its stdin, and
reads its stdout on a background thread: responses go to the call waiting
for them (matched by the id the client assigns), events go to the stream of
the prompt or compact that started them (matched by ``prompt_id``). Only
the standard library is used.
"""

from __future__ import annotations

import itertools
import queue
import subprocess
import threading
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from . import _wire
from ._ext import ExtensionMethods
from ._mcp import MCPMethods
from ._config import ConfigMethods
from ._skills import SkillMethods
from ._sessions import SessionMethods
from ._tools import ToolMethods
from .errors import ProtocolError, ZotClosedError, ZotError
from .types import (
    AbortResult,
    ClientToolCallEvent,
    DoneEvent,
    ErrorEvent,
    Event,
    HelloResult,
    MessagesResult,
    ModelsResult,
    PermissionRequestEvent,
    PingResult,
    PromptResult,
    Response,
    SetModelResult,
    SetModeResult,
    SandboxState,
    UndoResult,
    StartResult,
    StateResult,
    parse_result,
)

__all__ = ["Client", "PermissionAnswer", "PromptStream"]

# What an ``on_permission_request`` callback returns: a decision
# (``"allow_once"``, ``"allow_always"`` or ``"reject"``), or a
# ``(decision, reason)`` pair; the reason of a reject is shown to the model.
PermissionAnswer = Union[str, Tuple[str, Optional[str]]]


class _Waiter:
    """One request waiting for its response."""

    __slots__ = ("ready", "response", "error")

    def __init__(self) -> None:
        self.ready = threading.Event()
        self.response: Optional[Response] = None
        self.error: Optional[BaseException] = None


class _End:
    """Queued after the last event when the stream can get no more."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


class PromptStream:
    """The events of one ``prompt`` or ``compact``, in order, ending with
    its ``done`` event (which is yielded too).

    Iterating blocks until the next event. It raises ZotClosedError when
    zot exits before ``done``, and TimeoutError when the client's
    ``event_timeout`` passes without an event.

    Attributes:
        id: The command's id; every event of this stream has it as
            ``prompt_id``.
        command: ``"prompt"`` or ``"compact"``.
        start: The server's answer: started now, or queued at a position.
    """

    def __init__(
        self,
        cid: Any,
        command: str,
        timeout: Optional[float],
        abort: Optional[Callable[..., AbortResult]] = None,
    ) -> None:
        self.id = cid
        self.command = command
        self.start: StartResult = StartResult(started=False)
        self._queue: "queue.Queue[Any]" = queue.Queue()
        self._timeout = timeout
        self._finished = False
        self._abort = abort

    @property
    def started(self) -> bool:
        """True when the work started at once."""
        return bool(self.start.started)

    @property
    def queued(self) -> bool:
        """True when the work waits behind a running prompt or compact."""
        return bool(self.start.queued)

    @property
    def position(self) -> Optional[int]:
        """The place in the queue when queued (1 runs next), else None."""
        return self.start.position

    @property
    def finished(self) -> bool:
        """True once ``done`` was yielded (or the stream ended in error)."""
        return self._finished

    def __iter__(self) -> Iterator[Event]:
        return self

    def __next__(self) -> Event:
        if self._finished:
            raise StopIteration
        try:
            item = self._queue.get(timeout=self._timeout)
        except queue.Empty:
            raise TimeoutError(
                f"no event of {self.command} {self.id!r} within {self._timeout} s"
            ) from None
        if isinstance(item, _End):
            self._finished = True
            raise item.error
        if _wire.event_type(item) == "done":
            self._finished = True
        return item

    def collect(self) -> List[Event]:
        """Reads the rest of the stream and returns its events, done last."""
        return list(self)

    def result(self) -> Optional[PromptResult]:
        """Reads the rest of the stream and returns the prompt's record
        from its ``done``: stop reason, final text, turns, tool calls,
        duration, usage and cost of this prompt, and ``structured`` (the
        answer parsed as JSON) when the prompt gave an ``output_schema``.
        None for a compaction. Raises ZotError (``code`` of the ``error``
        event, e.g. ``invalid_output``; the record as its ``result``) when
        the work failed."""
        failure: Optional[ErrorEvent] = None
        done: Optional[DoneEvent] = None
        for ev in self:
            if isinstance(ev, ErrorEvent):
                failure = ev
            elif isinstance(ev, DoneEvent):
                done = ev
        res = done.result if done is not None else None
        if failure is not None:
            err = ZotError(failure.code or "", failure.message, self.command)
            err.result = res  # type: ignore[attr-defined]
            raise err
        return res

    def cancel(self) -> AbortResult:
        """Cancels this work alone (``abort`` with its ``prompt_id``):
        aborted if it runs, dropped from the queue if it waits (``dropped``
        1); either way the stream ends with ``turn_end`` (aborted) then
        ``done``. Work that has ended is left alone (``aborted`` false,
        ``dropped`` 0), and other work is never cut, even when this work
        ends as the abort is sent."""
        if self._abort is None:
            raise RuntimeError("this stream belongs to no client")
        return self._abort(prompt_id=self.id)

    def _put(self, item: Any) -> None:
        self._queue.put(item)


class Client(ExtensionMethods, MCPMethods, SessionMethods, ToolMethods, ConfigMethods, SkillMethods):
    """Drives one ``zot rpc`` process over its pipes.

    Args:
        args: Flags for ``zot rpc``, e.g. ``["--provider", "scripted"]``.
        binary: The zot executable; default ``ZOT_BIN``, then ``zot`` on
            PATH.
        command: The whole argv to spawn instead of ``binary rpc args``
            (for wrappers, or a stand-in server in tests).
        env: Variables set for the child on top of this process's
            environment; a None value removes one. Set
            ``ZOTCORE_RPC_TOKEN`` here to require ``hello``.
        cwd: The child's working directory.
        stderr: Where the child's stderr goes: None (this process's
            ``sys.stderr``), a file or file descriptor
            (``subprocess.DEVNULL``), a callable getting each line, or a
            writer such as ``io.StringIO``. Never stdout. The client
            passes it on and keeps its last lines, which end the message
            of a ZotClosedError.
        timeout: Seconds to wait for a response before TimeoutError; None
            waits forever. Every response is immediate on a healthy server.
        event_timeout: Seconds a stream waits for its next event before
            TimeoutError; None (default) waits forever.
        on_unrouted: Called on the reader thread with each event that
            belongs to no stream of this client (e.g. one without
            ``prompt_id``).
        on_protocol_error: Called on the reader thread with each
            ProtocolError (a line that is not JSON, a response nobody waits
            for). They are also kept in ``protocol_errors``.
        on_permission_request: Answers each ``permission_request`` event
            (zot asks them only when started with ``--approve``): called on
            a thread of its own with the PermissionRequestEvent, it returns
            a PermissionAnswer (a decision, or a ``(decision, reason)``
            pair), which is sent as ``answer_permission``; an exception
            rejects the call. The event also reaches its stream. Without
            it, answer with ``answer_permission``.

    Raises FileNotFoundError/OSError when zot cannot be spawned. Commands
    may be sent from several threads at once; each PromptStream should be
    read by one thread.
    """

    def __init__(
        self,
        args: Sequence[str] = (),
        *,
        binary: Optional[str] = None,
        command: Optional[Sequence[str]] = None,
        env: Optional[Mapping[str, Optional[str]]] = None,
        cwd: Optional[str] = None,
        stderr: _wire.StderrSink = None,
        timeout: Optional[float] = 30.0,
        event_timeout: Optional[float] = None,
        on_unrouted: Optional[Callable[[Event], None]] = None,
        on_protocol_error: Optional[Callable[[ProtocolError], None]] = None,
        on_permission_request: Optional[Callable[[PermissionRequestEvent], PermissionAnswer]] = None,
    ) -> None:
        argv = _wire.build_argv(binary, args, command)
        self._stderr_tail = _wire.StderrTail()
        stderr_arg, stderr_line = _wire.stderr_plan(stderr, self._stderr_tail)
        self._timeout = timeout
        self._event_timeout = event_timeout
        self._on_unrouted = on_unrouted
        self._on_protocol_error = on_protocol_error
        self._on_permission_request = on_permission_request
        self._tools = {}
        self.protocol_errors: List[ProtocolError] = []
        self._router = _wire.Router()
        self._ids = itertools.count(1)
        self._send_lock = threading.Lock()
        self._proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr_arg,
            env=_wire.child_env(env),
            cwd=cwd,
        )
        self._stderr_pump: Optional[threading.Thread] = None
        if stderr_line is not None:
            self._stderr_pump = threading.Thread(
                target=self._pump_stderr, args=(stderr_line,), name="zot-rpc-stderr", daemon=True
            )
            self._stderr_pump.start()
        # Started last: when zot exits at once, the reader joins the pump.
        self._reader = threading.Thread(target=self._read_stdout, name="zot-rpc-stdout", daemon=True)
        self._reader.start()

    # ---- lifecycle -------------------------------------------------------

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def pid(self) -> int:
        """The zot process's id."""
        return self._proc.pid

    @property
    def returncode(self) -> Optional[int]:
        """zot's exit status once it exited, else None."""
        return self._proc.poll()

    def wait(self, timeout: Optional[float] = None) -> int:
        """Waits for zot to exit and returns its status.

        Raises subprocess.TimeoutExpired when timeout passes first.
        """
        return self._proc.wait(timeout)

    def close(self, timeout: float = 10.0) -> int:
        """Shuts zot down and returns its exit status.

        Closes zot's stdin, so zot finishes the running and queued work and
        exits 0; after timeout seconds it is sent SIGTERM (it aborts its
        work and kills tool processes), and after 3 more seconds killed.
        Call ``abort(all=True)`` first to stop the work rather than wait.
        Safe to call more than once.
        """
        with self._send_lock:
            try:
                self._proc.stdin.close()
            except OSError:
                pass  # the pipe is already broken: zot is gone
        try:
            self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self._proc.terminate()
            try:
                self._proc.wait(3.0)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._reader.join()
        self._proc.stdout.close()
        if self._stderr_pump is not None:
            self._stderr_pump.join()
        return self._proc.returncode

    # ---- commands ----------------------------------------------------------

    def hello(
        self,
        token: Optional[str] = None,
        *,
        protocol_version: Optional[int] = None,
        client: Optional[Mapping[str, Any]] = None,
        child_events: Optional[bool] = None,
    ) -> HelloResult:
        """Introduces the client; with token, authenticates it.

        When zot runs with ``ZOTCORE_RPC_TOKEN`` this must be the first
        command. A wrong token raises ZotError (``invalid_token``) and zot
        exits. protocol_version (the version the caller speaks) and client
        (who it is, e.g. ``{"name": "my-editor", "version": "2.1"}``) are
        sent when given; the result's ``protocol_version`` is the server's.
        With child_events=True the events of sub-agents (the task tool)
        arrive too, as ChildEvent on the prompt's stream (docs/agents.md).
        """
        cmd: Dict[str, Any] = _wire.hello_command(token, protocol_version, client, child_events)
        return self._call(cmd)

    def prompt(
        self,
        message: str,
        images: Optional[Iterable[_wire.ImageLike]] = None,
        output_schema: Optional[Dict[str, Any]] = None,
        output_retries: Optional[int] = None,
        **overrides: Any,
    ) -> PromptStream:
        """Sends a prompt and returns the stream of its events.

        Returns once zot accepted it; ``stream.start`` tells whether it
        started or was queued (and at which position). images are
        ImageInput values, dicts, or raw image bytes. output_schema, a JSON
        Schema as a dict, asks for a final answer in that shape (parsed on
        ``stream.result().structured``), with up to output_retries
        corrective turns. model, reasoning, max_steps, max_tokens and
        max_cost_usd (keywords) change this prompt only. Raises ZotError
        when zot refuses it (e.g. ``invalid_image``).
        """
        cmd: Dict[str, Any] = {"type": "prompt", "message": message}
        imgs = _wire.image_inputs(images)
        if imgs is not None:
            cmd["images"] = imgs
        if output_schema is not None:
            cmd["output_schema"] = output_schema
        if output_retries is not None:
            cmd["output_retries"] = output_retries
        for k in ("model", "reasoning", "max_steps", "max_tokens", "max_cost_usd"):
            if overrides.get(k) is not None:
                cmd[k] = overrides.pop(k)
        if overrides:
            raise TypeError("prompt: unknown arguments " + ", ".join(sorted(overrides)))
        return self._start(cmd)

    def run(self, message: str, **kwargs: Any) -> Optional[PromptResult]:
        """Sends a prompt (arguments as ``prompt``) and returns its record
        once it ends (see ``PromptStream.result``)."""
        return self.prompt(message, **kwargs).result()

    def steer(self, message: str) -> Optional[PromptStream]:
        """Adds message to the running prompt at its next step boundary.
        Returns None when it was handed to the running prompt (its
        ``user_message``, ``kind`` ``steer``, comes on that prompt's
        stream); when no prompt runs it becomes a prompt of its own and
        its stream is returned. ZotError ``limit_exceeded`` past the
        bounds (64 KiB, 16 waiting)."""
        stream = self._start({"type": "steer", "message": message})
        if stream.start.steered:
            self._router.forget(stream.id)
            stream._finished = True
            return None
        return stream

    def follow_up(self, message: str) -> PromptStream:
        """Queues a prompt for after the running work (as ``prompt``
        does when busy); returns its stream."""
        return self._start({"type": "follow_up", "message": message})

    def inject_context(self, text: str, source: Optional[str] = None) -> int:
        """Adds system context to the next model call (of the running
        prompt, or the next one), marked as coming from source; returns
        how many contexts wait. ZotError ``limit_exceeded`` past the
        bounds."""
        cmd: Dict[str, Any] = {"type": "inject_context", "text": text}
        if source is not None:
            cmd["source"] = source
        return self._call(cmd).pending

    def external_event(self, payload: Any, source: Optional[str] = None) -> PromptStream:
        """Queues an event from outside (any JSON value) as a prompt of
        its own, marked with source; returns its stream."""
        cmd: Dict[str, Any] = {"type": "external_event", "payload": payload}
        if source is not None:
            cmd["source"] = source
        return self._start(cmd)

    def compact(self, instructions: Optional[str] = None) -> PromptStream:
        """Starts compacting the transcript; returns the stream of its
        events (``compact_done`` or ``error``, then ``done``)."""
        cmd: Dict[str, Any] = {"type": "compact"}
        if instructions is not None:
            cmd["instructions"] = instructions
        return self._start(cmd)

    def abort(self, all: bool = False, prompt_id: Any = None) -> AbortResult:  # noqa: A002 - the wire's name
        """Cancels the running prompt or compact; with all, drops the queue
        too. With prompt_id (a stream's ``id``), cancels only the work of
        that command: aborted if it runs, dropped if it waits, left alone
        if it has ended (``PromptStream.cancel`` sends this); not with all
        (ZotError ``invalid_params``). The cancelled streams end with
        ``turn_end`` (aborted) then ``done``."""
        cmd: Dict[str, Any] = {"type": "abort"}
        if all:
            cmd["all"] = True
        if prompt_id is not None:
            cmd["prompt_id"] = prompt_id
        return self._call(cmd)

    def get_state(self) -> StateResult:
        """Returns a snapshot of the runtime."""
        return self._call({"type": "get_state"})

    def get_messages(self) -> MessagesResult:
        """Returns the whole transcript."""
        return self._call({"type": "get_messages"})

    def clear(self) -> None:
        """Drops the transcript; ZotError ``busy`` while work runs or waits."""
        self._call({"type": "clear"})

    def set_model(self, model: str) -> SetModelResult:
        """Switches model; ZotError ``unknown_model`` or ``busy``."""
        return self._call({"type": "set_model", "model": model})

    def set_mode(self, mode: str) -> SetModeResult:
        """Switches the permission mode (ask, accept_edits, auto,
        read_only); ZotError ``invalid_params`` for a mode not offered."""
        return self._call({"type": "set_mode", "mode": mode})

    def set_sandbox(
        self, mode: Optional[str] = None, network: Optional[bool] = None
    ) -> SandboxState:
        """Changes the sandbox of the tools, as /jail and /unjail do:
        ``mode`` (read-only, workspace-write, full, off) and ``network``
        (whether commands reach it), each unchanged when None. Returns the
        sandbox in force; ZotError ``invalid_params`` for a mode that is
        not one."""
        cmd: Dict[str, Any] = {"type": "set_sandbox"}
        if mode is not None:
            cmd["mode"] = mode
        if network is not None:
            cmd["network"] = network
        return self._call(cmd)

    def undo(self, turn: Optional[int] = None) -> UndoResult:
        """Undoes the last turn, or turn ``turn`` (from 1) and every turn
        after it: the files they changed and their messages. ZotError
        ``changed_outside`` (a file changed outside zot since; nothing was
        restored), ``not_found`` or ``busy``."""
        cmd: Dict[str, Any] = {"type": "undo"}
        if turn is not None:
            cmd["turn"] = turn
        return self._call(cmd)

    def get_models(self) -> ModelsResult:
        """Lists the provider's models."""
        return self._call({"type": "get_models"})

    def ping(self) -> PingResult:
        """Health check."""
        return self._call({"type": "ping"})

    def answer_permission(
        self,
        request_id: str,
        decision: str,
        reason: Optional[str] = None,
        save: Optional[str] = None,
        rule: Optional[str] = None,
    ) -> None:
        """Answers a ``permission_request`` event: ``"allow_once"`` runs the
        tool call, ``"allow_always"`` runs it and every later call of that
        tool without asking, ``"reject"`` refuses it (reason is shown to the
        model). With ``"allow_always"``, ``save`` (``"project"`` or
        ``"everywhere"``) also keeps the request's ``rule`` (or ``rule``)
        as a permission rule in zot's config.json for later sessions
        (docs/settings.md); ZotError ``settings_error`` when it cannot be
        saved, and the request still waits. ZotError ``unknown_request``
        when the request no longer waits (answered, timed out or
        aborted)."""
        self._call(_wire.answer_command(request_id, decision, reason, save, rule))

    def request(self, cmd: Mapping[str, Any]) -> Response:
        """Sends any command (its ``id`` is assigned here) and returns the
        raw response, failed or not. For commands newer than this client."""
        return self._send(dict(cmd), None)

    # ---- plumbing ----------------------------------------------------------

    def _call(self, cmd: Dict[str, Any]) -> Any:
        resp = self._send(cmd, None)
        _raise_failure(resp)
        return parse_result(resp.command or cmd["type"], resp.data)

    def _start(self, cmd: Dict[str, Any]) -> PromptStream:
        cid = next(self._ids)
        stream = PromptStream(cid, cmd["type"], self._event_timeout, self.abort)
        resp = self._send(cmd, stream, cid)
        if not resp.success:
            self._router.forget(cid)
            _raise_failure(resp)
        stream.start = parse_result(cmd["type"], resp.data) or StartResult(started=True)
        return stream

    def _send(self, cmd: Dict[str, Any], stream: Optional[PromptStream], cid: Any = None) -> Response:
        if cid is None:
            cid = next(self._ids)
        cmd["id"] = cid
        line = _wire.encode(cmd)
        waiter = _Waiter()
        with self._send_lock:
            if not self._router.register(cid, waiter, stream):
                raise self._closed_error()
            try:
                self._proc.stdin.write(line)
                self._proc.stdin.flush()
            except (OSError, ValueError) as e:
                self._router.forget(cid)
                raise self._closed_error() from e
        if not waiter.ready.wait(self._timeout):
            self._router.forget(cid)
            raise TimeoutError(f"no response to {cmd['type']} within {self._timeout} s")
        if waiter.error is not None:
            raise waiter.error
        assert waiter.response is not None
        return waiter.response

    def _closed_error(self) -> ZotClosedError:
        code = self._proc.poll()
        return self._exit_error("zot is not running", code)

    def _exit_error(self, what: str, code: Optional[int]) -> ZotClosedError:
        tail = self._stderr_tail
        return ZotClosedError(_wire.exit_message(what, code, tail), code, tail.reason())

    def _read_stdout(self) -> None:
        out = self._proc.stdout
        try:
            while True:
                # readline on a binary stream splits on b"\n" only, so
                # U+2028 and friends inside strings never split a frame.
                line = out.readline()
                if not line:
                    break
                if line.endswith(b"\n"):
                    line = line[:-1]
                if line.strip():
                    self._dispatch(line)
        except (OSError, ValueError):
            pass  # the pipe broke: treated as the end of output below
        finally:
            self._shut_router()

    def _dispatch(self, line: bytes) -> None:
        try:
            d = _wire.decode_line(line)
        except ProtocolError as e:
            self._protocol_error(e)
            return
        kind, value, problem = _wire.classify(d)
        if problem is not None:
            problem.line = line[:200]
            self._protocol_error(problem)
        if kind == "response":
            waiter = self._router.take_response(value)
            if waiter is None:
                self._protocol_error(ProtocolError(f"response nobody waits for (id {value.id!r})", line[:200]))
                return
            waiter.response = value
            waiter.ready.set()
        elif kind == "event":
            done = _wire.event_type(value) == "done"
            stream = self._router.stream_for(_wire.event_prompt_id(value), done)
            if stream is not None:
                stream._put(value)
            elif self._on_unrouted is not None:
                self._on_unrouted(value)
            if isinstance(value, ClientToolCallEvent):
                self._run_tool(value)
            if isinstance(value, PermissionRequestEvent) and self._on_permission_request is not None:
                # Not on the reader: the answer may take a person's time,
                # and the reader must go on routing (an abort's answer, say).
                threading.Thread(
                    target=self._answer_request, args=(value,), name="zot-rpc-permission", daemon=True
                ).start()

    def _answer_request(self, ev: PermissionRequestEvent) -> None:
        assert self._on_permission_request is not None
        decision, reason = _wire.permission_answer(self._on_permission_request, ev)
        try:
            self.answer_permission(ev.request_id, decision, reason)
        except (ZotError, ZotClosedError, TimeoutError):
            pass  # the request no longer waits, or zot is gone

    def _protocol_error(self, e: ProtocolError) -> None:
        self.protocol_errors.append(e)
        if self._on_protocol_error is not None:
            self._on_protocol_error(e)

    def _shut_router(self) -> None:
        try:
            code = self._proc.wait(2.0)
        except subprocess.TimeoutExpired:
            code = None
        if self._stderr_pump is not None:
            self._stderr_pump.join(2.0)  # the reason zot gave comes last
        err = self._exit_error("zot's output ended", code)
        waiters, streams = self._router.close()
        for w in waiters:
            w.error = err
            w.ready.set()
        for s in streams:
            s._put(_End(err))

    def _pump_stderr(self, handle: Callable[[bytes], None]) -> None:
        err = self._proc.stderr
        try:
            for raw in iter(err.readline, b""):
                handle(raw)
        except (OSError, ValueError):
            pass  # the pipe broke: zot is gone
        finally:
            err.close()


def _raise_failure(resp: Response) -> None:
    """Raises ZotError for a failure response."""
    if not resp.success:
        raise ZotError(resp.code or "", resp.error or "command failed", resp.command, resp)

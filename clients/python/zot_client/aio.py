"""An asyncio client for ``zot rpc``.

    from zot_client.aio import AsyncClient

    async with AsyncClient(args=["--provider", "scripted"]) as zot:
        async for ev in zot.prompt("hello"):
            ...

The same protocol handling as zot_client.client.Client, on an asyncio
subprocess: one reader task routes responses to the awaiting call (by the
id the client assigns) and events to their prompt's stream (by
``prompt_id``). Only the standard library is used.
"""

from __future__ import annotations

import asyncio
import itertools
import subprocess
from typing import (
    Any,
    Awaitable,
    Callable,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    Union,
)

from . import _wire
from ._ext import AsyncExtensionMethods
from ._mcp import AsyncMCPMethods
from ._config import AsyncConfigMethods
from ._skills import AsyncSkillMethods
from ._sessions import AsyncSessionMethods
from ._tools import AsyncToolMethods, Tool
from .client import PermissionAnswer, _raise_failure
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

__all__ = ["AsyncClient", "AsyncPromptStream"]

# The default bound on one output line; zot's transcripts report image sizes,
# not data, so real lines stay far below it.
DEFAULT_MAX_LINE_BYTES = 256 << 20


class _End:
    """Queued after the last event when the stream can get no more."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


class AsyncPromptStream:
    """The events of one ``prompt`` or ``compact``, ending with ``done``
    (which is yielded too).

    Either await it to send the command and learn how it started
    (``s = await zot.prompt("hi"); s.position``), then iterate; or iterate
    it directly (``async for ev in zot.prompt("hi")``), which sends the
    command first. Awaiting or iterating raises ZotError when zot refuses
    the command, ZotClosedError when zot exits before ``done``, and
    asyncio.TimeoutError when the client's ``event_timeout`` passes without
    an event.

    Attributes:
        id: The command's id, the ``prompt_id`` of every event here.
        command: ``"prompt"`` or ``"compact"``.
        start: The server's answer (set once sent): started now, or queued.
    """

    def __init__(self, client: "AsyncClient", cmd: Dict[str, Any], cid: Any) -> None:
        self.id = cid
        self.command: str = cmd["type"]
        self.start: StartResult = StartResult(started=False)
        self._client = client
        self._cmd = cmd
        self._queue: "asyncio.Queue[Any]" = asyncio.Queue()
        self._sent: Optional["asyncio.Task[None]"] = None
        self._finished = False
        self._cancelled = False

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

    async def send(self) -> "AsyncPromptStream":
        """Sends the command (once) and waits for its response."""
        if self._cancelled and self._sent is None:
            self._finished = True
            raise ZotError("aborted", "cancelled before it was sent", self.command)
        if self._sent is None:
            self._sent = asyncio.ensure_future(self._client._start(self))
        await asyncio.shield(self._sent)
        return self

    def __await__(self):  # type: ignore[no-untyped-def]
        return self.send().__await__()

    def __aiter__(self) -> "AsyncPromptStream":
        return self

    async def __anext__(self) -> Event:
        if self._finished:
            raise StopAsyncIteration
        await self.send()
        timeout = self._client._event_timeout
        if timeout is None:
            item = await self._queue.get()
        else:
            item = await asyncio.wait_for(self._queue.get(), timeout)
        if isinstance(item, _End):
            self._finished = True
            raise item.error
        if _wire.event_type(item) == "done":
            self._finished = True
        return item

    async def collect(self) -> List[Event]:
        """Reads the rest of the stream and returns its events, done last."""
        return [ev async for ev in self]

    async def result(self) -> Optional[PromptResult]:
        """Reads the rest of the stream and returns the prompt's record
        from its ``done`` (see PromptStream.result): None for a
        compaction; ZotError (the ``error`` event's code, the record as its
        ``result``) when the work failed."""
        failure: Optional[ErrorEvent] = None
        done: Optional[DoneEvent] = None
        async for ev in self:
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

    async def cancel(self) -> AbortResult:
        """Cancels this work alone (``abort`` with its ``prompt_id``):
        aborted if it runs, dropped from the queue if it waits (``dropped``
        1); either way the stream ends with ``turn_end`` (aborted) then
        ``done``. Work that has ended is left alone, and other work is never
        cut. A stream not sent yet is never sent: awaiting or iterating it
        raises ZotError ``aborted``."""
        if self._sent is None:
            self._cancelled = True
            return AbortResult(aborted=False, dropped=0)
        await asyncio.shield(self._sent)
        return await self._client.abort(prompt_id=self.id)

    def _put(self, item: Any) -> None:
        self._queue.put_nowait(item)


class AsyncClient(AsyncExtensionMethods, AsyncMCPMethods, AsyncSessionMethods, AsyncConfigMethods, AsyncToolMethods, AsyncSkillMethods):
    """Drives one ``zot rpc`` process from asyncio.

    Takes the same arguments as zot_client.Client, plus max_line_bytes,
    the longest output line accepted. Use ``async with AsyncClient(...)``
    or ``await AsyncClient(...).start()``; the process is spawned then.
    ``on_permission_request`` may be a plain or an async function; it runs
    as a task of its own, and its answer is sent as ``answer_permission``.
    Client tools (``@zot.tool``, ``await zot.register_tools(...)``) run
    as tasks of their own too.
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
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        on_permission_request: Optional[
            Callable[[PermissionRequestEvent], Union[PermissionAnswer, Awaitable[PermissionAnswer]]]
        ] = None,
    ) -> None:
        self._argv = _wire.build_argv(binary, args, command)
        self._stderr_tail = _wire.StderrTail()
        self._stderr_arg, self._stderr_line = _wire.stderr_plan(stderr, self._stderr_tail)
        self._env = _wire.child_env(env)
        self._cwd = cwd
        self._timeout = timeout
        self._event_timeout = event_timeout
        self._on_unrouted = on_unrouted
        self._on_protocol_error = on_protocol_error
        self._max_line = max_line_bytes
        self._on_permission_request = on_permission_request
        self._answering: "set[asyncio.Task[None]]" = set()
        self._tools: Dict[str, Tool] = {}
        self._pending_tools: List[Tool] = []
        self._tool_tasks: "set[asyncio.Task[None]]" = set()
        self.protocol_errors: List[ProtocolError] = []
        self._router = _wire.Router()
        self._ids = itertools.count(1)
        self._proc: Optional[asyncio.subprocess.Process] = None
        self._send_lock: Optional[asyncio.Lock] = None
        self._tasks: List["asyncio.Task[None]"] = []
        self._stderr_task: Optional["asyncio.Task[None]"] = None

    # ---- lifecycle -------------------------------------------------------

    async def start(self) -> "AsyncClient":
        """Spawns zot and starts reading its output. Returns self."""
        if self._proc is not None:
            return self
        self._send_lock = asyncio.Lock()
        self._proc = await asyncio.create_subprocess_exec(
            *self._argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr_arg,
            env=self._env,
            cwd=self._cwd,
            limit=self._max_line,
        )
        if self._stderr_line is not None:
            self._stderr_task = asyncio.ensure_future(self._pump_stderr(self._stderr_line))
            self._tasks.append(self._stderr_task)
        self._tasks.append(asyncio.ensure_future(self._read_stdout()))
        return self

    async def __aenter__(self) -> "AsyncClient":
        return await self.start()

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    @property
    def pid(self) -> int:
        """The zot process's id."""
        return self._process().pid

    @property
    def returncode(self) -> Optional[int]:
        """zot's exit status once it exited, else None."""
        return self._process().returncode

    async def wait(self) -> int:
        """Waits for zot to exit and returns its status."""
        return await self._process().wait()

    async def close(self, timeout: float = 10.0) -> int:
        """Shuts zot down and returns its exit status.

        Closes zot's stdin so it finishes its work and exits; after timeout
        seconds sends SIGTERM, and after 3 more seconds kills it. Safe to
        call more than once.
        """
        proc = self._process()
        assert self._send_lock is not None
        async with self._send_lock:
            if proc.stdin is not None and not proc.stdin.is_closing():
                proc.stdin.close()
                try:
                    await proc.stdin.wait_closed()
                except OSError:
                    pass  # the pipe is already broken: zot is gone
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except asyncio.TimeoutError:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 3.0)
            except asyncio.TimeoutError:
                proc.kill()
                await proc.wait()
        for t in self._tasks:
            await t
        running = list(self._answering) + list(self._tool_tasks)
        for t in running:
            t.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
        return proc.returncode if proc.returncode is not None else -1

    # ---- commands ----------------------------------------------------------

    async def hello(
        self,
        token: Optional[str] = None,
        *,
        protocol_version: Optional[int] = None,
        client: Optional[Mapping[str, Any]] = None,
        child_events: Optional[bool] = None,
    ) -> HelloResult:
        """Introduces the client; with token, authenticates it (see
        Client.hello)."""
        return await self._call(_wire.hello_command(token, protocol_version, client, child_events))

    def prompt(
        self,
        message: str,
        images: Optional[Iterable[_wire.ImageLike]] = None,
        output_schema: Optional[Dict[str, Any]] = None,
        output_retries: Optional[int] = None,
        **overrides: Any,
    ) -> AsyncPromptStream:
        """Returns the stream of a prompt; the command is sent when the
        stream is first awaited or iterated. The arguments are those of
        Client.prompt: images, output_schema and output_retries, and the
        keywords model, reasoning, max_steps, max_tokens and max_cost_usd
        that change this prompt only."""
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
        return AsyncPromptStream(self, cmd, next(self._ids))

    async def run(self, message: str, **kwargs: Any) -> Optional[PromptResult]:
        """Sends a prompt (arguments as ``prompt``) and returns its record
        once it ends (see AsyncPromptStream.result)."""
        return await self.prompt(message, **kwargs).result()

    async def steer(self, message: str) -> Optional[AsyncPromptStream]:
        """Adds message to the running prompt at its next step boundary
        (sent at once). Returns None when the running prompt took it (its
        ``user_message``, ``kind`` ``steer``, comes on that prompt's
        stream); when no prompt runs it becomes a prompt of its own and
        its stream, already sent, is returned. ZotError ``limit_exceeded``
        past the bounds (64 KiB, 16 waiting)."""
        stream = AsyncPromptStream(self, {"type": "steer", "message": message}, next(self._ids))
        await stream.send()
        if stream.start.steered:
            self._router.forget(stream.id)
            stream._finished = True
            return None
        return stream

    def follow_up(self, message: str) -> AsyncPromptStream:
        """Returns the stream of a prompt queued after the running work
        (as ``prompt`` is when busy); sent when first awaited or
        iterated."""
        return AsyncPromptStream(self, {"type": "follow_up", "message": message}, next(self._ids))

    async def inject_context(self, text: str, source: Optional[str] = None) -> int:
        """Adds system context to the next model call (of the running
        prompt, or the next one), marked as coming from source; returns
        how many contexts wait. ZotError ``limit_exceeded`` past the
        bounds."""
        cmd: Dict[str, Any] = {"type": "inject_context", "text": text}
        if source is not None:
            cmd["source"] = source
        return (await self._call(cmd)).pending

    def external_event(self, payload: Any, source: Optional[str] = None) -> AsyncPromptStream:
        """Returns the stream of an event from outside (any JSON value),
        run as a prompt of its own marked with source, queued when busy;
        sent when first awaited or iterated."""
        cmd: Dict[str, Any] = {"type": "external_event", "payload": payload}
        if source is not None:
            cmd["source"] = source
        return AsyncPromptStream(self, cmd, next(self._ids))

    def compact(self, instructions: Optional[str] = None) -> AsyncPromptStream:
        """Returns the stream of a compaction; sent when first awaited or
        iterated. It ends with ``compact_done`` (or ``error``) then
        ``done``."""
        cmd: Dict[str, Any] = {"type": "compact"}
        if instructions is not None:
            cmd["instructions"] = instructions
        return AsyncPromptStream(self, cmd, next(self._ids))

    async def abort(self, all: bool = False, prompt_id: Any = None) -> AbortResult:  # noqa: A002 - the wire's name
        """Cancels the running prompt or compact; with all, drops the
        queue too. With prompt_id (a stream's ``id``), cancels only the
        work of that command: aborted if it runs, dropped if it waits, left
        alone if it has ended (``AsyncPromptStream.cancel`` sends this); not
        with all (ZotError ``invalid_params``)."""
        cmd: Dict[str, Any] = {"type": "abort"}
        if all:
            cmd["all"] = True
        if prompt_id is not None:
            cmd["prompt_id"] = prompt_id
        return await self._call(cmd)

    async def get_state(self) -> StateResult:
        """Returns a snapshot of the runtime."""
        return await self._call({"type": "get_state"})

    async def get_messages(self) -> MessagesResult:
        """Returns the whole transcript."""
        return await self._call({"type": "get_messages"})

    async def clear(self) -> None:
        """Drops the transcript; ZotError ``busy`` while work runs or
        waits."""
        await self._call({"type": "clear"})

    async def set_model(self, model: str) -> SetModelResult:
        """Switches model; ZotError ``unknown_model`` or ``busy``."""
        return await self._call({"type": "set_model", "model": model})

    async def set_mode(self, mode: str) -> SetModeResult:
        """Switches the permission mode (ask, accept_edits, auto,
        read_only); ZotError ``invalid_params`` for a mode not offered."""
        return await self._call({"type": "set_mode", "mode": mode})

    async def set_sandbox(
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
        return await self._call(cmd)

    async def undo(self, turn: Optional[int] = None) -> UndoResult:
        """Undoes the last turn, or turn ``turn`` (from 1) and every turn
        after it: the files they changed and their messages. ZotError
        ``changed_outside`` (a file changed outside zot since; nothing was
        restored), ``not_found`` or ``busy``."""
        cmd: Dict[str, Any] = {"type": "undo"}
        if turn is not None:
            cmd["turn"] = turn
        return await self._call(cmd)

    async def get_models(self) -> ModelsResult:
        """Lists the provider's models."""
        return await self._call({"type": "get_models"})

    async def ping(self) -> PingResult:
        """Health check."""
        return await self._call({"type": "ping"})

    async def answer_permission(
        self,
        request_id: str,
        decision: str,
        reason: Optional[str] = None,
        save: Optional[str] = None,
        rule: Optional[str] = None,
    ) -> None:
        """Answers a ``permission_request`` event (see
        Client.answer_permission)."""
        await self._call(_wire.answer_command(request_id, decision, reason, save, rule))

    async def request(self, cmd: Mapping[str, Any]) -> Response:
        """Sends any command (its ``id`` is assigned here) and returns the
        raw response, failed or not."""
        return await self._send(dict(cmd), None, next(self._ids))

    # ---- plumbing ----------------------------------------------------------

    def _process(self) -> asyncio.subprocess.Process:
        if self._proc is None:
            raise RuntimeError("AsyncClient not started: use `async with` or await start()")
        return self._proc

    async def _call(self, cmd: Dict[str, Any]) -> Any:
        resp = await self._send(cmd, None, next(self._ids))
        _raise_failure(resp)
        return parse_result(resp.command or cmd["type"], resp.data)

    async def _start(self, stream: AsyncPromptStream) -> None:
        resp = await self._send(dict(stream._cmd), stream, stream.id)
        if not resp.success:
            self._router.forget(stream.id)
            _raise_failure(resp)
        stream.start = parse_result(stream.command, resp.data) or StartResult(started=True)

    async def _send(self, cmd: Dict[str, Any], stream: Optional[AsyncPromptStream], cid: Any) -> Response:
        if cmd["type"] not in ("hello", "register_tools", "client_tool_result"):
            await self._flush_tools()  # the decorator's tools, before the command that may need them
        proc = self._process()
        assert self._send_lock is not None and proc.stdin is not None
        cmd["id"] = cid
        line = _wire.encode(cmd)
        fut: "asyncio.Future[Response]" = asyncio.get_running_loop().create_future()
        async with self._send_lock:
            if not self._router.register(cid, fut, stream):
                raise self._closed_error()
            try:
                proc.stdin.write(line)
                await proc.stdin.drain()
            except (OSError, RuntimeError) as e:
                self._router.forget(cid)
                raise self._closed_error() from e
        try:
            if self._timeout is None:
                return await fut
            return await asyncio.wait_for(asyncio.shield(fut), self._timeout)
        except asyncio.TimeoutError:
            self._router.forget(cid)
            raise asyncio.TimeoutError(f"no response to {cmd['type']} within {self._timeout} s") from None

    def _closed_error(self) -> ZotClosedError:
        code = self._process().returncode
        return self._exit_error("zot is not running", code)

    def _exit_error(self, what: str, code: Optional[int]) -> ZotClosedError:
        tail = self._stderr_tail
        return ZotClosedError(_wire.exit_message(what, code, tail), code, tail.reason())

    async def _read_stdout(self) -> None:
        out = self._process().stdout
        assert out is not None
        try:
            while True:
                try:
                    # Split on b"\n" only: U+2028 inside strings is no break.
                    line = await out.readuntil(b"\n")
                except asyncio.IncompleteReadError as e:
                    if e.partial.strip():
                        self._dispatch(e.partial)
                    break
                except asyncio.LimitOverrunError:
                    await self._skip_long_line(out)
                    continue
                line = line[:-1]
                if line.strip():
                    self._dispatch(line)
        except (OSError, ValueError):
            pass  # the pipe broke: treated as the end of output below
        finally:
            await self._shut_router()

    async def _skip_long_line(self, out: asyncio.StreamReader) -> None:
        self._protocol_error(ProtocolError(f"output line longer than {self._max_line} bytes; skipped"))
        while True:
            try:
                await out.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as e:
                await out.readexactly(e.consumed)

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
            fut = self._router.take_response(value)
            if fut is None:
                self._protocol_error(ProtocolError(f"response nobody waits for (id {value.id!r})", line[:200]))
            elif not fut.done():
                fut.set_result(value)
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
                task = asyncio.ensure_future(self._answer_request(value))
                self._answering.add(task)
                task.add_done_callback(self._answering.discard)

    async def _answer_request(self, ev: PermissionRequestEvent) -> None:
        assert self._on_permission_request is not None
        try:
            ans = self._on_permission_request(ev)
            if asyncio.iscoroutine(ans) or isinstance(ans, asyncio.Future):
                ans = await ans
            decision, reason = _wire.normalize_answer(ans)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - the callback's failure rejects the call
            decision, reason = "reject", f"the client failed to decide: {type(e).__name__}: {e}"
        try:
            await self.answer_permission(ev.request_id, decision, reason)
        except (ZotError, ZotClosedError, asyncio.TimeoutError):
            pass  # the request no longer waits, or zot is gone

    def _protocol_error(self, e: ProtocolError) -> None:
        self.protocol_errors.append(e)
        if self._on_protocol_error is not None:
            self._on_protocol_error(e)

    async def _shut_router(self) -> None:
        proc = self._process()
        try:
            code: Optional[int] = await asyncio.wait_for(proc.wait(), 2.0)
        except asyncio.TimeoutError:
            code = None
        if self._stderr_task is not None:
            await asyncio.wait({self._stderr_task}, timeout=2.0)  # the reason zot gave comes last
        err = self._exit_error("zot's output ended", code)
        waiters, streams = self._router.close()
        for fut in waiters:
            if not fut.done():
                fut.set_exception(err)
        for s in streams:
            s._put(_End(err))

    async def _pump_stderr(self, handle: Callable[[bytes], None]) -> None:
        err = self._process().stderr
        assert err is not None
        while True:
            try:
                raw = await err.readline()
            except ValueError:
                continue  # a stderr line over the limit was dropped by readline
            except OSError:
                return
            if not raw:
                return
            handle(raw)

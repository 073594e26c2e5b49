"""Pieces shared by the thread and asyncio clients: finding and spawning
zot, encoding commands, decoding output lines, and routing frames to the
request or prompt they belong to."""

from __future__ import annotations

import base64
import collections
import json
import os
import shutil
import subprocess
import sys
import threading
from typing import (
    Any,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    Callable,
    Tuple,
    Union,
)

from .errors import ProtocolError
from .types import Event, ImageInput, Response, UnknownEvent, parse_event

# What ``prompt(images=...)`` takes: ImageInput values, JSON-ready dicts
# ({"mime_type": ..., "data": <base64>}), or raw image bytes (base64-encoded
# here; zot sniffs the format).
ImageLike = Union[ImageInput, Mapping[str, Any], bytes, bytearray, memoryview]


def find_zot(binary: Optional[str] = None) -> str:
    """Returns the zot executable to run.

    Uses binary when given, else the ``ZOT_BIN`` environment variable, else
    ``zot`` on PATH. Raises FileNotFoundError when none is found.
    """
    if binary:
        return binary
    env = os.environ.get("ZOT_BIN")
    if env:
        return env
    found = shutil.which("zot")
    if found:
        return found
    raise FileNotFoundError("zot not found: pass binary=, set ZOT_BIN, or put zot on PATH")


def build_argv(
    binary: Optional[str],
    args: Sequence[str],
    command: Optional[Sequence[str]],
) -> List[str]:
    """Returns the argv to spawn: command as given, or ``zot rpc args...``."""
    if command is not None:
        if not command:
            raise ValueError("command must not be empty")
        return [str(a) for a in command]
    return [find_zot(binary), "rpc", *[str(a) for a in args]]


def child_env(overlay: Optional[Mapping[str, Optional[str]]]) -> Optional[Dict[str, str]]:
    """Returns the child's environment: this process's, with overlay applied.

    A None value in overlay removes that variable. Returns None (inherit
    unchanged) when overlay is None.
    """
    if overlay is None:
        return None
    env = dict(os.environ)
    for k, v in overlay.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = str(v)
    return env


def encode(cmd: Mapping[str, Any]) -> bytes:
    """Encodes one command as one LF-terminated line.

    ensure_ascii keeps the line pure ASCII, so no character of the message
    (U+2028, a lone surrogate, …) can be mistaken for a line break.
    """
    return json.dumps(cmd, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


def decode_line(line: bytes) -> Dict[str, Any]:
    """Decodes one output line (without its LF) into a JSON object.

    Raises ProtocolError when the line is not UTF-8 or not one JSON object.
    """
    if line.endswith(b"\r"):
        line = line[:-1]
    try:
        d = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ProtocolError(f"output line is not JSON: {e}", line[:200]) from e
    if not isinstance(d, dict):
        raise ProtocolError("output line is not a JSON object", line[:200])
    return d


def image_inputs(images: Optional[Iterable[ImageLike]]) -> Optional[List[Dict[str, Any]]]:
    """Turns the images a caller passed into the wire's ImageInput objects."""
    if images is None:
        return None
    out: List[Dict[str, Any]] = []
    for i, img in enumerate(images):
        if isinstance(img, ImageInput):
            out.append(img.to_dict())
        elif isinstance(img, (bytes, bytearray, memoryview)):
            out.append({"data": base64.b64encode(bytes(img)).decode("ascii")})
        elif isinstance(img, Mapping):
            out.append(dict(img))
        else:
            raise TypeError(f"images[{i}]: want ImageInput, dict or bytes, got {type(img).__name__}")
    return out


def hello_command(
    token: Optional[str],
    protocol_version: Optional[int],
    client: Optional[Mapping[str, Any]],
    child_events: Optional[bool] = None,
) -> Dict[str, Any]:
    """Returns a hello command with the members that were given."""
    cmd: Dict[str, Any] = {"type": "hello"}
    if child_events is not None:
        cmd["child_events"] = child_events
    if token is not None:
        cmd["token"] = token
    if protocol_version is not None:
        cmd["protocol_version"] = protocol_version
    if client is not None:
        cmd["client"] = dict(client)
    return cmd


def answer_command(
    request_id: str, decision: str, reason: Optional[str], save: Optional[str] = None, rule: Optional[str] = None
) -> Dict[str, Any]:
    """Returns an answer_permission command."""
    cmd: Dict[str, Any] = {"type": "answer_permission", "request_id": request_id, "decision": decision}
    if reason is not None:
        cmd["reason"] = reason
    if save is not None:
        cmd["save"] = save
    if rule is not None:
        cmd["rule"] = rule
    return cmd


def permission_answer(callback: Callable[[Any], Any], ev: Any) -> Tuple[str, Optional[str]]:
    """Calls an on_permission_request callback and returns its answer as a
    (decision, reason) pair; an exception, or an answer that is neither a
    decision nor a pair, rejects the call."""
    try:
        ans = callback(ev)
    except Exception as e:  # noqa: BLE001 - the callback's failure rejects the call
        return "reject", f"the client failed to decide: {type(e).__name__}: {e}"
    return normalize_answer(ans)


def normalize_answer(ans: Any) -> Tuple[str, Optional[str]]:
    """Turns what an on_permission_request callback returned into a
    (decision, reason) pair."""
    if isinstance(ans, str):
        return ans, None
    if isinstance(ans, tuple) and len(ans) == 2 and isinstance(ans[0], str):
        return ans[0], None if ans[1] is None else str(ans[1])
    return "reject", f"the client gave no decision (got {type(ans).__name__})"


def _id_key(v: Any) -> Any:
    """Returns the dictionary key of a JSON id, keeping its JSON type apart
    (a bool is never an id; 1 and "1" differ)."""
    if isinstance(v, bool):
        return ("bool", v)
    return v


class Router:
    """Matches output frames with the requests and prompts waiting for them.

    Requests are registered in the order their lines are written. A response
    is matched by its ``id``; a response without one (the server could not
    read the line, e.g. ``line_too_long``) goes to the oldest waiting
    request, because the server answers lines in order. Events are matched
    by ``prompt_id``. Safe to use from several threads.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: "collections.OrderedDict[Any, Any]" = collections.OrderedDict()
        self._streams: Dict[Any, Any] = {}
        self.closed = False

    def register(self, cid: Any, waiter: Any, stream: Any = None) -> bool:
        """Records a request about to be written; False once closed."""
        with self._lock:
            if self.closed:
                return False
            self._pending[_id_key(cid)] = waiter
            if stream is not None:
                self._streams[_id_key(cid)] = stream
            return True

    def forget(self, cid: Any) -> None:
        """Drops a request (and its stream) nobody waits for any more."""
        with self._lock:
            self._pending.pop(_id_key(cid), None)
            self._streams.pop(_id_key(cid), None)

    def take_response(self, resp: Response) -> Any:
        """Returns the waiter resp answers, removing it; None if none."""
        with self._lock:
            if resp.id is not None:
                return self._pending.pop(_id_key(resp.id), None)
            if self._pending:
                return self._pending.popitem(last=False)[1]
            return None

    def stream_for(self, prompt_id: Any, done: bool) -> Any:
        """Returns the stream of prompt_id (removing it on done); None if
        the event belongs to no stream of this client."""
        if prompt_id is None:
            return None
        with self._lock:
            if done:
                return self._streams.pop(_id_key(prompt_id), None)
            return self._streams.get(_id_key(prompt_id))

    def close(self) -> Tuple[List[Any], List[Any]]:
        """Marks the router closed; returns the waiters and streams left."""
        with self._lock:
            self.closed = True
            waiters = list(self._pending.values())
            streams = list(self._streams.values())
            self._pending.clear()
            self._streams.clear()
            return waiters, streams


def classify(d: Dict[str, Any]) -> Tuple[str, Any, Optional[ProtocolError]]:
    """Types one decoded frame.

    Returns ("response", Response, None), or ("event", Event, problem) where
    problem is set when a known event lacked a required field (the event is
    then passed on as an UnknownEvent), or ("bad", None, ProtocolError).
    """
    if d.get("type") == "response":
        try:
            return "response", Response.from_dict(d), None
        except ValueError as e:
            return "bad", None, ProtocolError(f"malformed response: {e}")
    try:
        return "event", parse_event(d), None
    except ValueError as e:
        t = d.get("type")
        if not isinstance(t, str):
            return "bad", None, ProtocolError(f"malformed frame: {e}")
        ev: Event = UnknownEvent(type=t, raw=dict(d))
        return "event", ev, ProtocolError(f"malformed {t} event: {e}")


def event_type(ev: Event) -> str:
    """Returns an event's ``type``, for typed and unknown events alike."""
    t = getattr(ev, "TYPE", None)
    return t if t is not None else ev.type


def event_prompt_id(ev: Event) -> Any:
    """Returns an event's ``prompt_id``, for typed and unknown events alike."""
    if isinstance(ev, UnknownEvent):
        return ev.raw.get("prompt_id")
    return getattr(ev, "prompt_id", None)


# Where the child's stderr goes: None (inherit this process's stderr), a file
# descriptor or an object with a working fileno() (subprocess.DEVNULL too),
# a callable that gets each line (str, without its newline), or an object
# with write() (e.g. io.StringIO) that gets each line with its newline.
StderrSink = Any


def stderr_plan(
    sink: StderrSink, tail: Optional["StderrTail"] = None
) -> Tuple[Any, Optional[Callable[[bytes], None]]]:
    """Returns the Popen ``stderr`` argument for sink, and the handler of
    each stderr line when the client must pump the pipe itself (else None).

    With tail, the client always pumps the pipe: each line goes to sink as
    before and is also kept by tail, so that an early exit can say why.
    stderr is never merged into stdout, which carries protocol frames only.
    """
    if sink is subprocess.STDOUT or sink is subprocess.PIPE:
        raise ValueError("stderr must not be STDOUT or PIPE: give a file, a callable or a writer")
    if tail is not None:
        forward = _forwarder(sink)

        def handle(raw: bytes) -> None:
            tail.add(raw)
            forward(raw)

        return subprocess.PIPE, handle
    if sink is None:
        return None, None
    if isinstance(sink, int):
        return sink, None
    if callable(sink):
        return subprocess.PIPE, lambda raw: sink(_stderr_text(raw).rstrip("\r\n"))
    fileno = getattr(sink, "fileno", None)
    if fileno is not None:
        try:
            fileno()
            return sink, None
        except (OSError, ValueError):
            pass  # e.g. io.StringIO: pump into write() below
    write = getattr(sink, "write", None)
    if write is not None:
        return subprocess.PIPE, lambda raw: write(_stderr_text(raw))
    raise TypeError(f"stderr sink of type {type(sink).__name__} is not supported")


def _forwarder(sink: StderrSink) -> Callable[[bytes], None]:
    """Returns what passes one raw stderr line on to sink."""
    if sink is None:
        return lambda raw: _write_text(sys.stderr, raw)
    if sink is subprocess.DEVNULL:
        return lambda raw: None
    if isinstance(sink, int):
        return lambda raw: _write_fd(sink, raw)
    if callable(sink):
        return lambda raw: sink(_stderr_text(raw).rstrip("\r\n"))
    fileno = getattr(sink, "fileno", None)
    if fileno is not None:
        try:
            fd = fileno()
            flush = getattr(sink, "flush", None)
            if flush is not None:
                flush()  # what the caller wrote before goes first
            return lambda raw: _write_fd(fd, raw)
        except (OSError, ValueError):
            pass  # e.g. io.StringIO: write() below
    if getattr(sink, "write", None) is not None:
        return lambda raw: sink.write(_stderr_text(raw))
    raise TypeError(f"stderr sink of type {type(sink).__name__} is not supported")


def _write_fd(fd: int, raw: bytes) -> None:
    view = memoryview(raw)
    while view:
        view = view[os.write(fd, view):]


def _write_text(stream: Any, raw: bytes) -> None:
    if stream is None:
        return
    try:
        stream.write(_stderr_text(raw))
        stream.flush()
    except (OSError, ValueError):
        pass  # our own stderr is closed: nothing to tell


class StderrTail:
    """The last lines zot wrote to stderr. zot writes there why it refused
    to start (a missing API key, a bad flag) before it exits, so an error
    about the exit ends with them."""

    LIMIT = 4096  # bytes kept
    LINES = 5  # lines reported

    def __init__(self) -> None:
        self._buf = bytearray()
        self._lock = threading.Lock()

    def add(self, raw: bytes) -> None:
        with self._lock:
            self._buf += raw
            if len(self._buf) > 2 * self.LIMIT:
                del self._buf[: len(self._buf) - self.LIMIT]

    def reason(self) -> str:
        """The last few non-empty lines, joined with " | "; "" for none."""
        with self._lock:
            cut = len(self._buf) > self.LIMIT
            data = bytes(self._buf[-self.LIMIT :])
        if cut and b"\n" in data:
            data = data[data.index(b"\n") + 1 :]  # start at a whole line
        lines = [ln.strip() for ln in _stderr_text(data).splitlines() if ln.strip()]
        return " | ".join(lines[-self.LINES :])


def exit_message(what: str, code: Optional[int], tail: Optional[StderrTail]) -> str:
    """Says that zot is gone, how it exited, and the end of its stderr."""
    msg = f"{what} (exit status {code})"
    reason = tail.reason() if tail is not None else ""
    return f"{msg}: {reason}" if reason else msg


def _stderr_text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")

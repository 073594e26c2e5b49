"""A client of zot's Agent Client Protocol door (JSON-RPC 2.0): a daemon's
WebSocket listener by URL with a bearer token (``connect``), or a
``zot acp`` it starts (``spawn``). Standard library only: the WebSocket is
``_websocket``'s, written on socket and ssl.

    from zot_client.acp import connect
    with connect("ws://127.0.0.1:8765", token=TOKEN, on_update=print,
                 on_permission=lambda req: "allow_once") as c:
        sid = c.new_session("/srv/work")
        print(c.prompt(sid, "hello").stop_reason)

Over WebSocket a dropped connection is dialed again and every session the
client had open is resumed (``session/resume``): a turn under way goes on
in the daemon and its updates reach ``on_update`` again from the moment
the session was resumed. What the daemon sent to the lost connection is
not sent again (the session file keeps it: ``load_session`` replays it),
and the turn's answer went there: ``prompt`` returns once the daemon says
the session is idle, with ``reconnected=True`` and no stop reason.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import threading
import time
from typing import Any, Callable, Dict, List, Optional
from urllib.parse import urlsplit, urlunsplit

from . import acp_types as types
from ._websocket import ConnectionClosed, HandshakeError, WebSocket, WebSocketError

__all__ = ["Client", "AcpError", "RefusedError", "PromptResult", "connect", "spawn", "types"]

Update = Dict[str, Any]
PermissionRequest = Dict[str, Any]


class AcpError(Exception):
    """The agent's error answer: ``code`` (JSON-RPC), ``kind`` (zot's
    data.kind: busy, unknown_session, …) and ``data``. A connection that
    ended has kind ``connection_lost``."""

    def __init__(self, code: int, message: str, data: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(message)
        self.code, self.data = code, data or {}
        self.kind = self.data.get("kind", "")


class RefusedError(AcpError):
    """The daemon refused the connection before the upgrade: ``status`` is
    401 for a missing or wrong token, 403 for an Origin not allowed, 429
    for too many connections."""

    def __init__(self, url: str, status: int, why: str) -> None:
        self.status = status
        if status == 401 and "invalid_token" in why:
            msg = f"{url} refused the token (HTTP 401, invalid_token): check the token against the daemon's token file"
        elif status == 401:
            msg = f"{url} needs a token (HTTP 401): pass token= or set ZOT_TOKEN"
        else:
            msg = f"{url} refused the connection (HTTP {status}): {why}"
        super().__init__(-32000, msg, {"kind": "refused", "status": status})


class PromptResult:
    """How a turn ended: ``stop_reason`` (a ``types.StopReason`` value, or
    None when ``reconnected``), ``meta`` (the answer's ``_meta``)."""

    def __init__(self, stop_reason: Optional[str], reconnected: bool = False, meta: Optional[dict] = None) -> None:
        self.stop_reason, self.reconnected, self.meta = stop_reason, reconnected, meta or {}

    def __repr__(self) -> str:
        return f"PromptResult(stop_reason={self.stop_reason!r}, reconnected={self.reconnected})"


def _acp_url(url: str) -> str:
    u = urlsplit(url)
    if u.scheme not in ("ws", "wss"):
        raise ValueError(f"{url!r}: the URL of a daemon's listener starts with ws:// or wss://")
    return urlunsplit((u.scheme, u.netloc, u.path if u.path not in ("", "/") else "/acp", u.query, ""))


class _WSLink:
    """A WebSocket connection as the client's link: one message each way."""

    def __init__(self, url: str, token: Optional[str], timeout: float) -> None:
        self.url = url
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        try:
            self.ws = WebSocket(url, headers=headers, subprotocols=("acp",), timeout=timeout)
        except HandshakeError as e:
            raise RefusedError(url, e.status, e.headers.get("www-authenticate", "") or e.body.strip()) from None
        except OSError as e:
            raise AcpError(-32000, f"no zot daemon answers at {url}: {e}", {"kind": "connection_lost"}) from None

    def recv(self) -> Optional[str]:
        try:
            return self.ws.recv()
        except ConnectionClosed:
            return None

    def send(self, text: str) -> None:
        self.ws.send(text)

    def close(self) -> None:
        self.ws.close()


class _ProcLink:
    """A started ``zot acp``: one JSON line each way on its stdin and stdout."""

    def __init__(self, argv: List[str], env: Optional[Dict[str, str]], cwd: Optional[str], stderr: Any) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                     env=env, cwd=cwd)
        self._wlock = threading.Lock()

    def recv(self) -> Optional[str]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        return line.decode("utf-8") if line else None

    def send(self, text: str) -> None:
        assert self.proc.stdin is not None
        with self._wlock:
            try:
                self.proc.stdin.write(text.encode("utf-8") + b"\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, ValueError):
                raise ConnectionClosed() from None

    def close(self) -> None:
        if self.proc.stdin:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()


class _Call:
    def __init__(self, method: str, params: Any) -> None:
        self.method, self.params = method, params
        self.done = threading.Event()
        self.result: Any = None
        self.error: Optional[AcpError] = None
        self.gen = 0


class Client:
    """One connection to an ACP agent; use ``connect`` or ``spawn``. Its
    methods may be called from any thread; ``on_update`` runs on the
    reader thread (keep it short), ``on_permission`` on a thread of its
    own per question."""

    def __init__(self, dial: Callable[[], Any], on_update: Optional[Callable[[Update], None]],
                 on_permission: Optional[Callable[[PermissionRequest], Optional[str]]],
                 reconnect: bool, attempts: int = 10, timeout: float = 60.0, client_name: str = "zot-acp-python") -> None:
        self._dial, self.on_update, self.on_permission = dial, on_update, on_permission
        self._reconnect, self._attempts, self.timeout = reconnect, attempts, timeout
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._ready = threading.Event()  # set while the link takes requests
        self._pending: Dict[int, _Call] = {}
        self._sessions: Dict[str, str] = {}  # open sessions: id → cwd
        self._gen = 0
        self._closed = False
        self._failure: Optional[AcpError] = None
        self._threads: List[threading.Thread] = []
        self._init = {"protocolVersion": types.PROTOCOL_VERSION, "clientCapabilities": {},
                      "clientInfo": {"name": client_name, "version": "1"}}
        self._link = dial()
        self._ready.set()
        self._reader = threading.Thread(target=self._read, name="zot-acp-reader", daemon=True)
        self._reader.start()
        try:
            self.info = self.call(types.METHOD_INITIALIZE, self._init)
        except BaseException:
            self.close()
            raise

    # The wire.

    def _write(self, msg: Dict[str, Any]) -> None:
        self._link.send(json.dumps(msg, separators=(",", ":")))

    def _start(self, method: str, params: Any, wait_ready: bool = True) -> _Call:
        if wait_ready and not self._ready.wait(self.timeout):
            raise AcpError(-32000, "the connection to the agent is not back", {"kind": "connection_lost"})
        if self._failure is not None:
            raise self._failure
        call = _Call(method, params)
        cid = next(self._ids)
        with self._lock:
            call.gen = self._gen
            self._pending[cid] = call
        try:
            self._write({"jsonrpc": "2.0", "id": cid, "method": method, "params": params})
        except (ConnectionClosed, WebSocketError, OSError):
            pass  # the reader sees the drop and answers the call
        return call

    def _wait(self, call: _Call, timeout: Optional[float]) -> Any:
        if not call.done.wait(timeout):
            raise TimeoutError(f"{call.method}: no answer within {timeout} s")
        if call.error is not None:
            raise call.error
        return call.result

    def call(self, method: str, params: Any = None, timeout: Optional[float] = None) -> Any:
        """Makes any request (zot's ``_zot/`` methods among them) and returns
        its result; an error answer raises AcpError."""
        return self._wait(self._start(method, params if params is not None else {}),
                          timeout if timeout is not None else self.timeout)

    def notify(self, method: str, params: Any) -> None:
        """Sends a notification."""
        self._ready.wait(self.timeout)
        try:
            self._write({"jsonrpc": "2.0", "method": method, "params": params})
        except (ConnectionClosed, WebSocketError, OSError):
            pass

    def _read(self) -> None:
        while True:
            link = self._link
            try:
                text = link.recv()
            except (WebSocketError, OSError):
                text = None
            if text is None:
                if self._closed or not self._reconnect or not self._redial():
                    self._fail_all(AcpError(-32000, "the connection to the agent ended", {"kind": "connection_lost"}))
                    return
                continue
            try:
                msg = json.loads(text)
            except ValueError:
                continue
            if "method" in msg:
                self._serve(msg)
            elif "id" in msg:
                with self._lock:
                    call = self._pending.pop(msg["id"], None) if isinstance(msg["id"], int) else None
                if call is None:
                    continue
                if "error" in msg:
                    e = msg["error"] or {}
                    call.error = AcpError(e.get("code", -32603), e.get("message", ""), e.get("data"))
                else:
                    call.result = msg.get("result")
                    self._opened(call)
                call.done.set()

    def _opened(self, call: _Call) -> None:
        p, r = call.params or {}, call.result or {}
        if call.method == types.METHOD_SESSION_NEW and isinstance(r, dict) and r.get("sessionId"):
            self._sessions[r["sessionId"]] = p.get("cwd", "")
        elif call.method in (types.METHOD_SESSION_LOAD, types.METHOD_SESSION_RESUME):
            self._sessions[p["sessionId"]] = p.get("cwd", "")
        elif call.method in (types.METHOD_SESSION_CLOSE, types.METHOD_SESSION_DELETE):
            self._sessions.pop(p.get("sessionId"), None)

    def _serve(self, msg: Dict[str, Any]) -> None:
        method = msg["method"]
        if method == types.METHOD_SESSION_UPDATE:
            if self.on_update is not None:
                self.on_update(msg.get("params") or {})
            return
        if "id" not in msg:
            return
        if method != types.METHOD_SESSION_REQUEST_PERMISSION:
            self._answer(msg["id"], self._gen, error={"code": -32601, "message": f"method not found: {method}"})
            return
        gen = self._gen
        t = threading.Thread(target=self._ask, args=(msg["id"], gen, msg.get("params") or {}), daemon=True)
        self._threads.append(t)
        t.start()

    def _ask(self, rid: Any, gen: int, params: PermissionRequest) -> None:
        choice = None
        if self.on_permission is not None:
            try:
                choice = self.on_permission(params)
            except Exception:
                choice = None
        outcome = {"outcome": "selected", "optionId": choice} if choice else {"outcome": "cancelled"}
        self._answer(rid, gen, result={"outcome": outcome})

    def _answer(self, rid: Any, gen: int, result: Any = None, error: Any = None) -> None:
        # An answer to a question of a lost connection is dropped: the
        # daemon counted it rejected, and ids start again on a new one.
        if gen != self._gen:
            return
        msg: Dict[str, Any] = {"jsonrpc": "2.0", "id": rid}
        msg["error" if error is not None else "result"] = error if error is not None else result
        try:
            self._write(msg)
        except (ConnectionClosed, WebSocketError, OSError):
            pass

    def _fail_all(self, err: AcpError) -> None:
        with self._lock:
            self._failure = err
            calls, self._pending = list(self._pending.values()), {}
        self._ready.set()
        for c in calls:
            c.error = err
            c.done.set()

    def _redial(self) -> bool:
        """Dials again after a drop and resumes the sessions; answers the
        calls the lost connection took. False when it could not."""
        self._ready.clear()
        try:
            self._link.close()
        except OSError:
            pass
        with self._lock:
            lost = [(cid, c) for cid, c in self._pending.items() if c.gen == self._gen]
            for cid, _ in lost:
                del self._pending[cid]
            self._gen += 1
        wait = 0.1
        for _ in range(self._attempts):
            time.sleep(wait)
            wait = min(wait * 2, 2.0)
            if self._closed:
                return False
            try:
                self._link = self._dial()
                break
            except RefusedError:
                return False
            except AcpError:
                continue
        else:
            return False
        t = threading.Thread(target=self._recover, args=(lost,), name="zot-acp-recover", daemon=True)
        self._threads.append(t)
        t.start()
        return True

    def _recover(self, lost: List[Any]) -> None:
        try:
            self._wait(self._start(types.METHOD_INITIALIZE, self._init, wait_ready=False), self.timeout)
            for sid, cwd in list(self._sessions.items()):
                try:
                    self._wait(self._start(types.METHOD_SESSION_RESUME,
                                           {"sessionId": sid, "cwd": cwd, "mcpServers": []}, wait_ready=False), self.timeout)
                except AcpError:
                    self._sessions.pop(sid, None)
        except (AcpError, TimeoutError):
            pass
        finally:
            self._ready.set()
        for _, call in lost:
            if call.method == types.METHOD_SESSION_PROMPT:
                self._await_idle(call.params["sessionId"])
                call.result = {"_reconnected": True}
            else:
                call.error = AcpError(-32000, f"the connection dropped before {call.method} was answered",
                                      {"kind": "connection_lost"})
            call.done.set()

    def _await_idle(self, sid: str) -> None:
        while not self._closed:
            try:
                st = self.call(types.METHOD_ZOT_STATUS, {})
            except (AcpError, TimeoutError):
                return
            if not any(s.get("sessionId") == sid and s.get("busy") for s in st.get("sessions", [])):
                return
            time.sleep(0.2)

    # ACP.

    def new_session(self, cwd: str, mcp_servers: Optional[list] = None) -> str:
        """Opens a session whose tools work in ``cwd`` (absolute, on the
        agent's machine); returns its id."""
        return self.call(types.METHOD_SESSION_NEW, {"cwd": cwd, "mcpServers": mcp_servers or []})["sessionId"]

    def load_session(self, session_id: str, cwd: str) -> None:
        """Opens a stored session; its history is replayed through
        ``on_update`` before this returns (``busy`` while a turn of it runs:
        ``resume_session`` joins it then)."""
        self.call(types.METHOD_SESSION_LOAD, {"sessionId": session_id, "cwd": cwd, "mcpServers": []})

    def resume_session(self, session_id: str, cwd: str) -> None:
        """Opens a session without replaying it."""
        self.call(types.METHOD_SESSION_RESUME, {"sessionId": session_id, "cwd": cwd, "mcpServers": []})

    def prompt(self, session_id: str, text: str, timeout: Optional[float] = None) -> PromptResult:
        """Sends ``text`` and returns when the turn ends; its updates reach
        ``on_update`` meanwhile."""
        res = self._wait(self._start(types.METHOD_SESSION_PROMPT, {
            "sessionId": session_id, "prompt": [{"type": "text", "text": text}]}), timeout)
        if res.get("_reconnected"):
            return PromptResult(None, reconnected=True)
        return PromptResult(res.get("stopReason"), meta=res.get("_meta"))

    def cancel(self, session_id: str) -> None:
        """Asks the agent to end the session's turn (its prompt returns
        ``cancelled``)."""
        self.notify(types.METHOD_SESSION_CANCEL, {"sessionId": session_id})

    def close(self) -> None:
        """Ends the connection (a spawned agent is told by the end of its
        input and waited for)."""
        if self._closed:
            return
        self._closed = True
        try:
            self._link.close()
        except OSError:
            pass
        if self._reader is not threading.current_thread():
            self._reader.join(10)
        for t in self._threads:
            t.join(10)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def connect(url: str, token: Optional[str] = None, on_update: Optional[Callable[[Update], None]] = None,
            on_permission: Optional[Callable[[PermissionRequest], Optional[str]]] = None,
            reconnect: bool = True, timeout: float = 60.0) -> Client:
    """Connects to a daemon's listener (ws:// or wss://; the path defaults
    to /acp) with ``token`` (default: $ZOT_TOKEN). A refused token raises
    RefusedError."""
    url = _acp_url(url)
    token = token if token is not None else os.environ.get("ZOT_TOKEN")
    return Client(lambda: _WSLink(url, token, timeout), on_update, on_permission, reconnect, timeout=timeout)


def spawn(args: Optional[List[str]] = None, binary: Optional[str] = None, env: Optional[Dict[str, str]] = None,
          cwd: Optional[str] = None, stderr: Any = subprocess.DEVNULL,
          on_update: Optional[Callable[[Update], None]] = None,
          on_permission: Optional[Callable[[PermissionRequest], Optional[str]]] = None,
          timeout: float = 60.0) -> Client:
    """Starts ``zot acp`` (``binary``, else $ZOT_BIN, else zot on PATH) with
    ``args`` and speaks ACP on its stdin and stdout."""
    binary = binary or os.environ.get("ZOT_BIN") or shutil.which("zot")
    if not binary:
        raise FileNotFoundError("zot not found: pass binary=, set ZOT_BIN, or put zot on PATH")
    argv = [binary, "acp", *(args or [])]
    return Client(lambda: _ProcLink(argv, env, cwd, stderr), on_update, on_permission, False, timeout=timeout)

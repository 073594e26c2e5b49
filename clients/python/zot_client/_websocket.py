"""A small WebSocket client (RFC 6455) on the standard library's socket and
ssl, for zot's ACP client: text messages only, as ACP over WebSocket sends
them. The opening handshake with extra headers (the bearer token),
masked frames out, fragmented messages reassembled, pings answered, the
closing handshake. No extensions (no compression) are offered.
"""

from __future__ import annotations

import base64
import hashlib
import os
import socket
import ssl
import struct
import threading
from typing import Dict, Optional, Tuple
from urllib.parse import urlsplit

__all__ = ["WebSocket", "WebSocketError", "HandshakeError", "ConnectionClosed"]

_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


class WebSocketError(Exception):
    """The connection failed or broke the protocol."""


class HandshakeError(WebSocketError):
    """The server answered the upgrade request with something other than 101."""

    def __init__(self, status: int, headers: Dict[str, str], body: str) -> None:
        self.status, self.headers, self.body = status, headers, body
        super().__init__(f"HTTP {status}: {body.strip() or headers.get('www-authenticate', '')}")


class ConnectionClosed(WebSocketError):
    """The connection ended: ``code`` is the close code (1006 without one)."""

    def __init__(self, code: int = 1006, reason: str = "") -> None:
        self.code, self.reason = code, reason
        super().__init__(f"the WebSocket connection closed ({code}{': ' + reason if reason else ''})")


def _read_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionClosed()
        buf += chunk
    return bytes(buf)


class WebSocket:
    """One client connection. ``recv`` is for one reader thread; ``send``
    and ``close`` may be called from any thread."""

    def __init__(self, url: str, headers: Optional[Dict[str, str]] = None, subprotocols: Tuple[str, ...] = (),
                 timeout: float = 30.0, ssl_context: Optional[ssl.SSLContext] = None,
                 max_message: int = 64 << 20) -> None:
        u = urlsplit(url)
        if u.scheme not in ("ws", "wss") or not u.hostname:
            raise ValueError(f"{url!r}: a WebSocket URL starts with ws:// or wss:// and names a host")
        port = u.port or (443 if u.scheme == "wss" else 80)
        self.max_message = max_message
        self._wlock = threading.Lock()
        self._closed = False
        sock = socket.create_connection((u.hostname, port), timeout=timeout)
        try:
            if u.scheme == "wss":
                ctx = ssl_context or ssl.create_default_context()
                sock = ctx.wrap_socket(sock, server_hostname=u.hostname)
            key = base64.b64encode(os.urandom(16)).decode()
            host = u.netloc.rsplit("@", 1)[-1]
            lines = [f"GET {u.path or '/'}{'?' + u.query if u.query else ''} HTTP/1.1", f"Host: {host}",
                     "Upgrade: websocket", "Connection: Upgrade", f"Sec-WebSocket-Key: {key}",
                     "Sec-WebSocket-Version: 13"]
            if subprotocols:
                lines.append("Sec-WebSocket-Protocol: " + ", ".join(subprotocols))
            lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
            sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
            status, head, rest = self._read_response(sock)
            if status != 101:
                raise HandshakeError(status, head, rest.decode("utf-8", "replace"))
            want = base64.b64encode(hashlib.sha1((key + _GUID).encode()).digest()).decode()
            if head.get("sec-websocket-accept") != want or head.get("upgrade", "").lower() != "websocket":
                raise WebSocketError("the server's upgrade answer is not a WebSocket handshake")
            self.headers = head
            self._buf = rest
            sock.settimeout(None)
        except BaseException:
            sock.close()
            raise
        self.sock = sock

    @staticmethod
    def _read_response(sock: socket.socket) -> Tuple[int, Dict[str, str], bytes]:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                raise WebSocketError("the server closed the connection during the handshake")
            data += chunk
            if len(data) > 65536:
                raise WebSocketError("the server's handshake answer is too long")
        head_raw, rest = data.split(b"\r\n\r\n", 1)
        lines = head_raw.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        try:
            status = int(parts[1])
        except (IndexError, ValueError):
            raise WebSocketError(f"not an HTTP answer: {lines[0]!r}") from None
        head = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            head[k.strip().lower()] = v.strip()
        if status != 101:
            # Read the short body the server says it sends, when it says so.
            n = int(head.get("content-length", "0") or 0)
            sock.settimeout(2.0)
            try:
                while len(rest) < min(n, 4096):
                    chunk = sock.recv(4096)
                    if not chunk:
                        break
                    rest += chunk
            except OSError:
                pass
        return status, head, rest

    def _recv(self, n: int) -> bytes:
        if len(self._buf) >= n:
            out, self._buf = self._buf[:n], self._buf[n:]
            return out
        out, self._buf = self._buf, b""
        return out + _read_exact(self.sock, n - len(out))

    def _frame(self) -> Tuple[bool, int, bytes]:
        b0, b1 = self._recv(2)
        fin, opcode, masked, n = bool(b0 & 0x80), b0 & 0x0F, bool(b1 & 0x80), b1 & 0x7F
        if n == 126:
            (n,) = struct.unpack("!H", self._recv(2))
        elif n == 127:
            (n,) = struct.unpack("!Q", self._recv(8))
        if n > self.max_message:
            self.close(1009, "message too big")
            raise WebSocketError(f"a frame of {n} bytes is over the limit of {self.max_message}")
        mask = self._recv(4) if masked else b""
        data = self._recv(n)
        if masked:
            data = bytes(c ^ mask[i % 4] for i, c in enumerate(data))
        return fin, opcode, data

    def recv(self) -> str:
        """Returns the next text message; raises ConnectionClosed at the end."""
        parts, size = [], 0
        while True:
            try:
                fin, opcode, data = self._frame()
            except OSError as e:
                raise ConnectionClosed(1006, str(e)) from None
            if opcode == OP_PING:
                self._send(OP_PONG, data)
                continue
            if opcode == OP_PONG:
                continue
            if opcode == OP_CLOSE:
                code = struct.unpack("!H", data[:2])[0] if len(data) >= 2 else 1005
                try:
                    self._send(OP_CLOSE, data[:2])
                except OSError:
                    pass
                self._shut()
                raise ConnectionClosed(code, data[2:].decode("utf-8", "replace"))
            if opcode == OP_BINARY:
                self.close(1003, "binary messages are not ACP")
                raise WebSocketError("the server sent a binary message")
            if opcode not in (OP_TEXT, OP_CONT):
                self.close(1002, "unknown opcode")
                raise WebSocketError(f"unknown opcode {opcode}")
            parts.append(data)
            size += len(data)
            if size > self.max_message:
                self.close(1009, "message too big")
                raise WebSocketError(f"a message over the limit of {self.max_message} bytes")
            if fin:
                return b"".join(parts).decode("utf-8")

    def _send(self, opcode: int, payload: bytes) -> None:
        n = len(payload)
        head = bytes([0x80 | opcode])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 1 << 16:
            head += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack("!Q", n)
        mask = os.urandom(4)
        # XOR through integers: one pass in C, not a Python loop per byte.
        m = int.from_bytes((mask * (n // 4 + 1))[:n], "big")
        body = (int.from_bytes(payload, "big") ^ m).to_bytes(n, "big") if n else b""
        with self._wlock:
            if self._closed and opcode != OP_CLOSE:
                raise ConnectionClosed()
            self.sock.sendall(head + mask + body)

    def send(self, text: str) -> None:
        """Sends one text message."""
        try:
            self._send(OP_TEXT, text.encode("utf-8"))
        except OSError as e:
            raise ConnectionClosed(1006, str(e)) from None

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Sends a close frame and ends the connection (idempotent)."""
        if self._closed:
            return
        try:
            self._send(OP_CLOSE, struct.pack("!H", code) + reason.encode()[:120])
        except OSError:
            pass
        self._shut()

    def _shut(self) -> None:
        with self._wlock:
            self._closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

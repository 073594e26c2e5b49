"""Exceptions raised by the zot RPC clients."""

from __future__ import annotations

from typing import Optional

from .types import Response

__all__ = ["ZotError", "ZotClosedError", "ProtocolError"]


class ZotError(Exception):
    """A command failed: the server answered it with ``success: false``.

    Attributes:
        code: The stable error code (e.g. ``"busy"``, ``"unknown_model"``);
            see ``zot_client.ERROR_CODES``. Empty when the server sent none.
        message: The server's one-line explanation.
        command: The command's ``type`` as the server echoed it (empty when
            the server could not read the line).
        response: The whole failure response, unknown members included.
    """

    def __init__(
        self,
        code: str,
        message: str,
        command: str,
        response: Optional[Response] = None,
    ) -> None:
        super().__init__(code, message, command)
        self.code = code
        self.message = message
        self.command = command
        self.response = response

    def __str__(self) -> str:
        where = self.command or "command"
        if self.code:
            return f"{where} failed ({self.code}): {self.message}"
        return f"{where} failed: {self.message}"


class ZotClosedError(ConnectionError):
    """The zot process is gone (or its output ended) before an answer came.

    The message says how zot exited and ends with the last lines it wrote
    to stderr, where zot explains a refusal to start, e.g. ``zot's output
    ended (exit status 1): zot: no API key for anthropic: set
    ANTHROPIC_API_KEY, …``.

    Attributes:
        returncode: The process's exit status when known, else None.
        stderr: Those last stderr lines ("" when zot wrote none).
    """

    def __init__(self, message: str, returncode: Optional[int] = None, stderr: str = "") -> None:
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


class ProtocolError(ValueError):
    """The server wrote something the protocol does not allow, e.g. a line
    that is not one JSON object, or a response nobody is waiting for.

    Attributes:
        line: The offending output line, as bytes (possibly truncated).
    """

    def __init__(self, message: str, line: bytes = b"") -> None:
        super().__init__(message)
        self.line = line

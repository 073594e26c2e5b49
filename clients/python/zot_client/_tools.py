"""Client tools (docs/rpc.md, Client tools): Python functions the model can
call, registered on the session with ``register_tools``. Each
``client_tool_call`` of one runs the function on a thread of its own and
sends back its ``client_tool_result``.

    @zot.tool
    def weather(city: str) -> str:
        "The weather in a city."
        return "fog in " + city

The tool's name is the function's, its description the docstring, and the
JSON Schema of its arguments comes from the signature's annotations
(``str``, ``int``, ``float``, ``bool``, ``list``, ``dict``, ``Optional``):
a parameter without a default is required.

AsyncClient has the same, with ``await zot.register_tools(...)``; its
decorator registers the tool before the client's next command is sent,
and its tools may be coroutine functions (awaited on the client's loop)
or plain ones (run on the loop's default executor).
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import typing
from typing import Any, Callable, Dict, List, Mapping, Optional, Set

from . import _wire

_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array", dict: "object"}


def _schema_of_type(t: Any) -> Dict[str, Any]:
    origin = typing.get_origin(t)
    if origin is typing.Union:
        args = [a for a in typing.get_args(t) if a is not type(None)]
        return _schema_of_type(args[0]) if len(args) == 1 else {}
    if origin in (list, List):
        (item,) = typing.get_args(t) or (Any,)
        return {"type": "array", "items": _schema_of_type(item)} if item is not Any else {"type": "array"}
    if origin in (dict, Dict):
        return {"type": "object"}
    name = _JSON_TYPES.get(t)
    return {"type": name} if name else {}


def schema_of(fn: Callable[..., Any]) -> Dict[str, Any]:
    """The JSON Schema of ``fn``'s keyword arguments, from its annotations."""
    hints = typing.get_type_hints(fn)
    props: Dict[str, Any] = {}
    required: List[str] = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        props[p.name] = _schema_of_type(hints.get(p.name, Any))
        if p.default is p.empty:
            required.append(p.name)
    schema: Dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return schema


class Tool:
    """A Python function as a tool: ``name``, ``description``, the JSON
    ``schema`` of its arguments, ``read_only`` (it changes nothing: never
    asked about), ``timeout`` in seconds (default zot's, 60)."""

    def __init__(
        self,
        fn: Callable[..., Any],
        name: Optional[str] = None,
        description: Optional[str] = None,
        schema: Optional[Mapping[str, Any]] = None,
        read_only: bool = False,
        timeout: Optional[float] = None,
    ) -> None:
        self.fn = fn
        self.name = name or fn.__name__
        self.description = description if description is not None else inspect.cleandoc(fn.__doc__ or "")
        self.schema = dict(schema) if schema is not None else schema_of(fn)
        self.read_only = read_only
        self.timeout = timeout

    def to_wire(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"name": self.name, "description": self.description, "schema": self.schema}
        if self.read_only:
            d["read_only"] = True
        if self.timeout is not None:
            d["timeout_ms"] = max(1, int(self.timeout * 1000))
        return d

    def run(self, args: Mapping[str, Any]) -> Dict[str, Any]:
        """Calls the function; the result as ``client_tool_result`` takes
        it. A str is the text; a dict may give ``text``, ``images`` and
        ``is_error``; an exception is a failed call with its message."""
        try:
            out = self.fn(**dict(args))
        except Exception as e:  # noqa: BLE001 - the model is told what failed
            return _failed(e)
        return _result_of(out)

    async def arun(self, args: Mapping[str, Any]) -> Dict[str, Any]:
        """``run`` for asyncio: a coroutine function is awaited, a plain
        one runs on the loop's default executor."""
        if not inspect.iscoroutinefunction(self.fn):
            return await asyncio.get_running_loop().run_in_executor(None, self.run, args)
        try:
            out = await self.fn(**dict(args))
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - the model is told what failed
            return _failed(e)
        return _result_of(out)


def _failed(e: BaseException) -> Dict[str, Any]:
    """The result of a call whose function raised e."""
    return {"text": str(e) or type(e).__name__, "is_error": True}


def _result_of(out: Any) -> Dict[str, Any]:
    """A function's return value as ``client_tool_result`` takes it."""
    if isinstance(out, dict):
        res = {k: v for k, v in out.items() if k in ("text", "is_error")}
        if out.get("images"):
            res["images"] = _wire.image_inputs(out["images"])
        return res
    return {"text": "" if out is None else str(out)}


class ToolMethods:
    """Client tool commands of Client."""

    _tools: Dict[str, Tool]

    def register_tools(self, *tools: Any) -> List[str]:
        """Registers tools (``Tool`` values or plain functions) and returns
        the names the client has registered now. ZotError ``name_taken``
        for a name another tool of the session holds, ``invalid_params``
        for a bad definition; then none is added."""
        made = [t if isinstance(t, Tool) else Tool(t) for t in tools]
        before = dict(self._tools)
        self._tools.update({t.name: t for t in made})
        try:
            res = self._call({"type": "register_tools", "tools": [t.to_wire() for t in made]})  # type: ignore[attr-defined]
        except BaseException:
            self._tools.clear()
            self._tools.update(before)
            raise
        return list(res.tools)

    def unregister_tools(self, *names: str) -> List[str]:
        """Removes registered tools by name (none named: all of them) and
        returns the names left. ZotError ``not_found`` for a name not
        registered."""
        cmd: Dict[str, Any] = {"type": "unregister_tools"}
        if names:
            cmd["names"] = list(names)
        res = self._call(cmd)  # type: ignore[attr-defined]
        for n in list(self._tools):
            if n not in res.tools:
                del self._tools[n]
        return list(res.tools)

    def tool(self, fn: Optional[Callable[..., Any]] = None, **options: Any) -> Any:
        """A decorator that registers the function as a tool:
        ``@zot.tool`` or ``@zot.tool(read_only=True, timeout=5)`` (the
        options of ``Tool``). The function is returned as it was."""

        def register(f: Callable[..., Any]) -> Callable[..., Any]:
            self.register_tools(Tool(f, **options))
            return f

        return register(fn) if fn is not None else register

    def _run_tool(self, ev: Any) -> bool:
        """Starts the call of a registered tool on a thread; False when the
        tool is not this client's."""
        t = self._tools.get(ev.tool)
        if t is None:
            return False

        def run() -> None:
            result = t.run(ev.args or {})
            result.update(type="client_tool_result", call_id=ev.call_id)
            try:
                self._send(result, None)  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001 - the call no longer waits, or zot is gone
                pass

        threading.Thread(target=run, name="zot-rpc-tool", daemon=True).start()
        return True


class AsyncToolMethods:
    """Client tool commands of AsyncClient; see ToolMethods."""

    _tools: Dict[str, Tool]
    _pending_tools: List[Tool]
    _tool_tasks: "Set[asyncio.Task[None]]"

    async def register_tools(self, *tools: Any) -> List[str]:
        """Registers tools (``Tool`` values, plain or coroutine functions)
        and returns the names the client has registered now; refused as
        ToolMethods.register_tools is, adding none."""
        made = [t if isinstance(t, Tool) else Tool(t) for t in tools]
        before = dict(self._tools)
        self._tools.update({t.name: t for t in made})
        try:
            res = await self._call({"type": "register_tools", "tools": [t.to_wire() for t in made]})  # type: ignore[attr-defined]
        except BaseException:
            self._tools.clear()
            self._tools.update(before)
            raise
        return list(res.tools)

    async def unregister_tools(self, *names: str) -> List[str]:
        """Removes registered tools by name (none named: all of them) and
        returns the names left; ZotError ``not_found`` for a name not
        registered."""
        cmd: Dict[str, Any] = {"type": "unregister_tools"}
        if names:
            cmd["names"] = list(names)
        res = await self._call(cmd)  # type: ignore[attr-defined]
        for n in list(self._tools):
            if n not in res.tools:
                del self._tools[n]
        return list(res.tools)

    def tool(self, fn: Optional[Callable[..., Any]] = None, **options: Any) -> Any:
        """A decorator that makes the function a tool: ``@zot.tool`` or
        ``@zot.tool(read_only=True, timeout=5)`` (the options of ``Tool``).
        It is registered before the client's next command is sent, in
        order; when zot refuses it (``name_taken``, ``invalid_params``)
        that command raises the ZotError. The function is returned as it
        was."""

        def register(f: Callable[..., Any]) -> Callable[..., Any]:
            self._pending_tools.append(Tool(f, **options))
            return f

        return register(fn) if fn is not None else register

    async def _flush_tools(self) -> None:
        """Registers the tools the decorator declared since the last
        command, if any."""
        if self._pending_tools:
            pending, self._pending_tools[:] = list(self._pending_tools), []
            await self.register_tools(*pending)

    def _run_tool(self, ev: Any) -> None:
        """Runs the call of a registered tool as a task of its own (kept
        until it has answered; cancelled by close); calls of tools that are
        not this client's are left alone."""
        t = self._tools.get(ev.tool)
        if t is None:
            return

        async def run() -> None:
            result = await t.arun(ev.args or {})
            result.update(type="client_tool_result", call_id=ev.call_id)
            try:
                await self._call(result)  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001 - the call no longer waits, or zot is gone
                pass

        task = asyncio.ensure_future(run())
        self._tool_tasks.add(task)
        task.add_done_callback(self._tool_tasks.discard)

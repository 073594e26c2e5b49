"""A minimal MCP server over stdio (newline-delimited JSON-RPC) for the
client tests: one tool, echo."""

import json
import sys


def main() -> None:
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue  # a notification
        method = msg.get("method")
        if method == "initialize":
            result = {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "py-echo", "version": "0.1.0"},
            }
        elif method == "tools/list":
            result = {"tools": [{
                "name": "echo",
                "description": "Says the text back.",
                "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            }]}
        elif method == "tools/call":
            text = msg["params"].get("arguments", {}).get("text", "")
            result = {"content": [{"type": "text", "text": "py echo: " + text}]}
        elif method == "ping":
            result = {}
        else:
            reply = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no method " + str(method)}}
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
            continue
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()

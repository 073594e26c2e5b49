"""Sends its argument to the zot daemon listening at $ZOT_URL (token
$ZOT_TOKEN) over ACP, prints the answer as it streams, allows tool calls."""

import os
import sys

from zot_client import acp


def show(params):
    update = params["update"]
    if update["sessionUpdate"] == "agent_message_chunk" and update["content"]["type"] == "text":
        print(update["content"]["text"], end="", flush=True)


with acp.connect(os.environ["ZOT_URL"], on_update=show, on_permission=lambda req: "allow_once") as client:
    session = client.new_session(os.getcwd())
    result = client.prompt(session, sys.argv[1])
    print("\nstop:", result.stop_reason)

// Sends its argument to the zot daemon listening at $ZOT_URL (token
// $ZOT_TOKEN) over ACP, prints the answer as it streams, allows tool calls.
import { connect } from "zot-client/acp";

const client = await connect(process.env.ZOT_URL ?? "ws://127.0.0.1:8765", {
  onUpdate: ({ update }) => {
    if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") {
      process.stdout.write(update.content.text);
    }
  },
  onPermission: () => "allow_once",
});
try {
  const session = await client.newSession(process.cwd());
  const { stopReason } = await client.prompt(session, process.argv[2]);
  console.log(`\nstop: ${stopReason}`);
} finally {
  await client.close();
}

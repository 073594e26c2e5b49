// Serves the fixtures of the file given as the first argument with aimock
// (@copilotkit/aimock, pinned in package.json) on 127.0.0.1 and a free
// port, prints the base URL on one line, and stops when stdin closes, so
// the test that started it owns its lifetime.
import { LLMock } from "@copilotkit/aimock";

const file = process.argv[2];
if (!file) {
  console.error("usage: node aimock-serve.mjs FIXTURES.json");
  process.exit(2);
}
const mock = new LLMock({ host: "127.0.0.1", port: 0, logLevel: "silent", chunkSize: 8 });
mock.loadFixtureFile(file);
await mock.start();
process.stdout.write(mock.url + "\n");
process.stdin.resume();
process.stdin.on("end", async () => {
  await mock.stop();
  process.exit(0);
});

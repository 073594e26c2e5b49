package main

import "testing"

// A guard that an extension registers in its start-up code (on_start,
// onStart, Init), after a second of work, guards the first prompt, sent
// as the very first line: each package promises ready in its hello
// (sends_ready), so zot waits for it instead of taking the quiet
// extension as ready without its intercepts.
func TestStartHookRegistersGuardBeforeFirstPrompt(t *testing.T) {
	guardInEachLanguage(t, "hookguard", `import time
from zot_ext import Block, Extension
ext = Extension("hookguard")

@ext.on_start
def start(host):
    time.sleep(1)

    @ext.intercept_turn_start
    def guard(step):
        return Block("hookguard: no model calls (step %d)" % step)

ext.run()
`, `import { Extension, block } from "zot-ext";
const ext = new Extension("hookguard");
ext.onStart(async () => {
  await new Promise((resolve) => setTimeout(resolve, 1000));
  ext.interceptTurnStart((step) => block("hookguard: no model calls (step " + step + ")"));
});
await ext.run();
`)
}

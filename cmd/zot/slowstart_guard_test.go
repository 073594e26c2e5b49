package main

import "testing"

// A guard declared before the extension runs guards the first prompt even
// when the extension's start-up code (on_start, onStart, Init) takes
// longer than the quiet after hello that zot takes as ready: each package
// announces what it subscribed to with its registrations, before that
// code runs, so zot never holds it ready without its intercepts.
func TestSlowStartKeepsTheGuard(t *testing.T) {
	guardInEachLanguage(t, "slowguard", `import time
from zot_ext import Block, Extension
ext = Extension("slowguard")

@ext.intercept_turn_start
def guard(step):
    return Block("slowguard: no model calls (step %d)" % step)

@ext.on_start
def start(host):
    time.sleep(1)

ext.run()
`, `import { Extension, block } from "zot-ext";
const ext = new Extension("slowguard");
ext.interceptTurnStart((step) => block("slowguard: no model calls (step " + step + ")"));
ext.onStart(() => new Promise((resolve) => setTimeout(resolve, 1000)));
await ext.run();
`)
}

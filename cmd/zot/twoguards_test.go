package main

import "testing"

// Two intercepts of the same event in one extension are chained, not the
// second put in the place of the first: a guard that blocks still blocks
// when another part of the program adds a guard that allows.
func TestSecondInterceptKeepsTheFirstGuard(t *testing.T) {
	guardInEachLanguage(t, "twoguards", `from zot_ext import Block, Extension
ext = Extension("twoguards")

@ext.intercept_turn_start
def strict(step):
    return Block("twoguards: no model calls (step %d)" % step)

@ext.intercept_turn_start
def lenient(step):
    return None

ext.run()
`, `import { Extension, block } from "zot-ext";
const ext = new Extension("twoguards");
ext.interceptTurnStart((step) => block("twoguards: no model calls (step " + step + ")"));
ext.interceptTurnStart(() => undefined);
await ext.run();
`)
}

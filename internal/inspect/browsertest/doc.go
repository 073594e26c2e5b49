// Package browsertest drives zot's inspector page (internal/inspect) in a
// real browser: Debian's chromium through chromedp, against the zot
// binary named by ZOT_BIN. It is a module of its own so that chromedp
// stays out of zot's module and binary; `make test-browser` runs it.
package browsertest

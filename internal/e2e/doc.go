// Package e2e runs zot end to end, as a subprocess, against an LLM API
// mock that nobody on this project wrote: aimock (@copilotkit/aimock,
// pinned in testtools/package.json and installed there by `make
// testtools`), which streams text, reasoning and tool calls in the format
// of each vendor. It holds tests only.
package e2e

// Package soak drives the real zot binary (`zot rpc` on the scripted
// provider) for a long time with random traffic and checks that the
// protocol's promises (docs/rpc.md) hold throughout, and that a
// long-lived process neither leaks file descriptors nor grows in memory.
//
// Two lanes run side by side. The long lane keeps one process for the
// whole run; the churn lane starts processes, uses them for a few bursts
// and ends them with SIGTERM or SIGINT mid-turn, or by closing stdin,
// then starts the next. Both send random bursts of commands (prompt,
// compact, abort, abort all, get_state, get_messages, clear, set_model,
// get_models, ping and malformed lines) and abort prompts mid-stream and
// mid-tool; each process plays a random script whose steps stream slowly
// and call bash (sleeps and ls), ls and read.
//
// Every frame is checked against the schema (internal/schemacheck) and
// decoded; see checker for the promises held. After a process exits, no
// process carrying its mark (an environment variable the tools inherit)
// may remain. The long lane samples its process's open descriptors and
// resident memory (VmRSS) each time it is idle.
//
// Beside the lanes, the daemon phase (daemon.go) runs one `zot daemon`
// for the whole run with extensions and MCP servers that flood and
// crash, and clients that read slowly, leave mid-turn and mid-replay,
// cancel and reconnect; its memory, descriptors, goroutines, the disk its
// logs take and its stderr are held flat.
//
// Run it with `make soak` (ten minutes) or `go test ./bench/soak
// -soak-duration 2m -v`; `make test` runs a 20-second one. It needs Linux
// (/proc).
package soak

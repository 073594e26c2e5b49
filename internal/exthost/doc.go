// Package exthost runs zot's extensions: programs in any language that
// speak the extension protocol (schema/ext, docs/extensions.md) as
// newline-delimited JSON over their stdin and stdout.
//
// A [Manager] finds the extensions ([Discover]: the explicit ones, then the
// project's ./.zot/extensions, then $ZOT_HOME/extensions; the first of a
// name wins), starts them concurrently, each in its own folder (the
// manifest's; hello_ack tells it the session's directory), and attaches each to the session once it has said hello and
// is ready:
//
//   - its tools join the session's tool set as source "ext:<name>"
//     (built-in tools win a name, then the extension loaded first);
//   - its intercepts become one interceptor in the session's chain, in
//     load order, with a deadline (5 s) and the manifest's failure policy
//     (allow by default, block with `fail_closed`);
//   - the lifecycle events it subscribed to reach it in order through a
//     session observer;
//   - its slash commands and panels are reached through [Manager.RunCommand],
//     [Manager.PanelKey] and [Manager.ClosePanel], and what it pushes (notices,
//     panel redraws) through [Config.Notify].
//
// One misbehaving extension never stalls or crashes the agent: every
// request to it has a deadline and is cancelled (a `cancel` frame) when
// given up; a crash fails its pending requests at once, takes its tools
// away and is reported; a frame over the size limit or not JSON is logged
// and skipped. Each extension has one outbox for its stdin: a lone
// request is written from the caller's goroutine by a write that never
// blocks, everything else by the outbox's one writer goroutine, in order
// and never interleaved. Request ids come from a counter (correlate) and
// its stderr is appended to $ZOT_HOME/logs/ext-<name>.log. Stopping is the
// ladder `shutdown` (its stdin closed once written), up to 2 s for it to
// exit, SIGTERM, up to 1 s, SIGKILL, for the extension's whole process
// group, each step skipped once the process is gone.
//
// Every prompt starts by waiting until the extensions are ready or have
// failed (a gate that runs before the prompt's first turn_start, so what
// they add takes part in its first step); so do the slash commands and
// their list. An extension that does not start is reported with the
// likely cause ([LikelyCause]) and the last lines of its stderr.
package exthost

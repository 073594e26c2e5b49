// Package ext is the Go package for writing zot extensions: programs that
// zot starts as child processes and talks to in newline-delimited JSON
// over their stdin and stdout (docs/extensions.md, schema/ext). An
// extension built with it runs on any host that speaks the protocol,
// zot's own included, and writes only the frames of
// [zot.dev/zot/sdk/extwire], the types generated from the schema.
//
// An extension is declared, then run:
//
//	e := ext.New("hello", "1.0.0")
//	e.Command("hello", "say hi", func(ctx context.Context, args string) ext.Response {
//		return ext.Prompt("Greet me in one short sentence.")
//	})
//	e.Tool("weather", "Current weather for a city.", schema,
//		func(ctx context.Context, args json.RawMessage) ext.ToolResult {
//			return ext.Text("Berlin: 16°C, fog")
//		})
//	if err := e.Run(context.Background()); err != nil {
//		log.Fatal(err)
//	}
//
// # What Run does
//
// Run writes `hello` and the registrations made so far, then waits for
// the host's `hello_ack`. Only then does it run the [Extension.Init]
// functions (which may read [HostInfo] and register more), send
// `subscribe` and `ready`, and let [Extension.Notify],
// [Extension.RenderPanel] and [Extension.ClosePanel] through: nothing
// that depends on hello_ack is written before it arrived. Registrations
// made after ready are sent at once, as the protocol allows.
//
// Every request of the host (a command, a tool call, an intercept) runs
// its handler on a goroutine of its own, with a context that ends when
// the host sends `cancel` for it (the prompt was aborted or the host
// stopped waiting), when the host shuts the extension down, or when
// Run's context ends; the answer of a cancelled handler is not sent. A
// handler that panics answers with an error (a tool, a command) or a
// block (an intercept: a guard that crashes must not let things
// through). Lifecycle events, panel keys and panel closes are handled
// one at a time, in the order the host sent them, on one goroutine.
//
// Every frame goes through one writer goroutine, so frames never
// interleave and reach the host in the order they were sent. stdout
// belongs to the protocol: log with [Extension.Logf] (to stderr, which
// zot appends to $ZOT_HOME/logs/ext-<name>.log).
//
// Run returns nil when the host sends `shutdown` (after answering
// `shutdown_ack`) or closes stdin, once every handler has returned.
package ext

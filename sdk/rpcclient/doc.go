// Package rpcclient drives a `zot rpc` subprocess from Go: it starts the
// process, sends commands on its stdin and reads responses and events from
// its stdout, one JSON object per line each way (see docs/rpc.md).
//
// Use it to run zot out of process — to isolate it, to run several
// projects side by side, or to use a zot binary other than the one
// compiled in. For zot inside your own process, use package sdk instead:
// its Runtime and this package's [Client] both implement
// [zot.dev/zot/sdk/client.Client], with the same methods and the same
// [wire] event values, so a program written against that interface
// changes between them by changing one constructor.
//
// A Client answers each command with its result or an [*Error] carrying the
// server's stable code. [Client.Prompt] and [Client.Compact] return a
// channel of the work's events, closed after its `done`:
//
//	c, err := rpcclient.Start(ctx, rpcclient.Options{Args: []string{"--provider", "scripted"}})
//	if err != nil {
//		return err
//	}
//	defer c.Close()
//	events, err := c.Prompt(ctx, "list the files", nil)
//	if err != nil {
//		return err
//	}
//	for ev := range events {
//		if d, ok := ev.(*wire.TextDeltaEvent); ok {
//			fmt.Print(d.Delta)
//		}
//	}
//
// When zot exits before a piece of work's `done`, its channel ends with a
// *wire.ErrorEvent (code "internal") saying how, and a *wire.DoneEvent. The
// deprecated [Client.PromptStream] and [Client.CompactStream] return a
// [*Stream] instead, which reports that as an error of its own.
//
// An event line the client cannot decode (a `type` it does not know, or
// fields that do not fit, as a newer server may send) still arrives in
// order, as a [*wire.UnknownEvent] holding the line as it came and why it
// did not decode.
//
// Events are buffered without bound until read, so a channel nobody reads
// never holds up zot or the Client's other commands (an abort, say). A
// Client is safe for concurrent use; every goroutine it starts ends by the
// time [Client.Close] returns.
package rpcclient

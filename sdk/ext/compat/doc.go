// Package ext lets a Go extension written for upstream zot's extension
// package (github.com/patriceckhart/zot/packages/agent/ext, formerly
// pkg/zotext) build against zot.dev/zot by changing only its import line:
//
//	import "github.com/patriceckhart/zot/packages/agent/ext"
//
// becomes
//
//	import ext "zot.dev/zot/sdk/ext/compat"
//
// It has that package's names and signatures (New, Command, Tool, On, the
// Intercept methods, OnPanelKey, RenderPanel, ClosePanel, Prompt,
// Display, TextResult, …) and runs on [zot.dev/zot/sdk/ext], which does
// the protocol: the handshake, one writer, a goroutine per request, and
// events, panel keys and panel closes handled one at a time in the order
// zot sent them (where upstream's package handles each key on a goroutine
// of its own, so a burst of keys can be applied out of order).
//
// New code should use [zot.dev/zot/sdk/ext] directly: its handlers take a
// context that ends when zot cancels the request, and its Run takes one.
// docs/extensions.md maps every name of this package to its counterpart
// there.
//
// What zot's host has no counterpart for is said on the name: deferred
// tools are offered from the start, tool namespaces, exposure, output
// schemas and structured results are not sent, the before_agent_start
// intercept and the events zot does not emit never arrive, CallTool
// reports that the host does not offer call_tool, and a ToolPrompt answer
// is shown as an error.
package ext

// hello is an extension of slash commands written against upstream zot's
// Go extension package; only its import line names zot.dev/zot's
// compatibility package instead. The tests of cmd/zot build it and drive it
// through `zot rpc`.
package main

import (
	"fmt"
	"os"
	"strings"

	ext "zot.dev/zot/sdk/ext/compat"
)

func main() {
	var e *ext.Extension = ext.New("hello", "0.3.0")

	var greet ext.CommandHandler = func(args string) ext.Response {
		who := strings.TrimSpace(args)
		if who == "" {
			who = "stranger"
		}
		return ext.Prompt("Say hello to " + who + ", in five words at most.")
	}
	e.Command("hello", "greet someone", greet)

	e.Command("hello-info", "who runs this extension", func(args string) ext.Response {
		var h ext.HostInfo = e.Host()
		return ext.Display(fmt.Sprintf("protocol %d, zot %s, provider %s, model %s, session in %s, kept in %s (data %s)",
			h.ProtocolVersion, h.ZotVersion, h.Provider, h.Model, h.CWD, h.ExtensionDir, h.DataDir))
	})
	e.Command("hello-draft", "start a greeting in the input", func(args string) ext.Response {
		return ext.Insert("Hello, " + args)
	})
	e.Command("hello-quiet", "greet with a notice only", func(args string) ext.Response {
		e.Notify("success", "hello, "+args)
		e.Notify("shout", "a level zot does not know")
		return ext.Noop()
	})
	e.Command("hello-fail", "always fails", func(args string) ext.Response {
		return ext.Errorf("cannot greet %q: %s", args, "no such person")
	})
	e.Command("hello-half", "shows a note and an error", func(args string) ext.Response {
		return ext.Response{Action: "display", Display: "greeted half of them", Error: "the other half was out"}
	})
	e.Command("hello-tool", "asks for a tool ahead of a prompt", func(args string) ext.Response {
		r := ext.ToolPrompt("read", map[string]string{"path": "README.md"}, "Summarise it.")
		e.Logf("tool prompt: %s %s then %q (insert %q, panel %v)", r.ToolName, r.ToolArgs, r.Prompt, r.Insert, r.OpenPanel)
		return r
	})

	// Registered once the host said who it is: the command's name depends
	// on the provider.
	e.OnHello(func(h ext.HostInfo) {
		e.Command("hello-"+h.Provider, "greet the provider", func(args string) ext.Response {
			return ext.Display("hello, " + h.Provider)
		})
		e.Logf("registered /hello-%s", h.Provider)
	})

	if err := e.Run(); err != nil {
		e.Logf("run: %v", err)
		os.Exit(1)
	}
}

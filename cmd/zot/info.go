package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/buildinfo"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/registry"
	"zot.dev/zot/sdk/wire"
)

// buildVersion is zot's version (see package buildinfo).
func buildVersion() string { return buildinfo.Version() }

// printVersion prints zot's version, protocol version and commit: three
// lines for people, or one JSON object.
func printVersion(out io.Writer, asJSON bool) error {
	info := buildinfo.Get()
	if asJSON {
		data, err := json.Marshal(struct {
			Version         string `json:"version"`
			ProtocolVersion int    `json:"protocol_version"`
			Commit          string `json:"commit"`
		}{info.Version, engine.ProtocolVersion, info.Commit})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", data)
		return err
	}
	_, err := fmt.Fprintf(out, "zot version %s\nprotocol version %d\ncommit %s\n", info.Version, engine.ProtocolVersion, info.Commit)
	return err
}

// listModels prints the model catalog: every provider's models, or only
// --provider's. It needs no key, except with --refresh, which first asks
// the providers' models endpoints (see refreshModels).
func listModels(ctx context.Context, cmd *cli.Command, out, errOut io.Writer) error {
	providers := registry.Names()
	if cmd.IsSet("provider") {
		p := cmd.String("provider")
		if !registry.Known(p) {
			return usagef("%s", (&registry.UnknownError{Name: p}).Error())
		}
		providers = []string{p}
	}
	h, err := zotHome(errOut)
	if err != nil && cmd.Bool("refresh") {
		return &exitError{code: 1, msg: err.Error()}
	}
	if cmd.Bool("refresh") {
		// The report goes to stderr, so --json output stays one value.
		if err := refreshModels(ctx, cmd, h, errOut); err != nil {
			return err
		}
	}
	catalog, err := loadCatalog(cmd.String("models-file"), h, errOut)
	if err != nil {
		return err
	}
	host := engine.NewHost(engine.HostConfig{Catalog: catalog})
	defer host.Close()
	var list []wire.ModelInfo
	for _, p := range providers {
		list = append(list, host.Models(p)...)
	}
	if cmd.Bool("json") {
		if list == nil {
			list = []wire.ModelInfo{}
		}
		line := append(wire.ModelsResult{Models: list}.AppendJSON(nil), '\n')
		_, err := out.Write(line)
		return err
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "PROVIDER\tMODEL\tCONTEXT\tMAX OUTPUT\tREASONING\tUSD PER MTOK IN/OUT")
	for _, m := range list {
		id := m.ID
		if def, _ := catalog.Default(m.Provider); def == m.ID {
			id += " *"
		}
		price, out := "unknown", "unknown"
		if m.Price != nil {
			price = money(m.Price.Input) + " / " + money(m.Price.Output)
		}
		if m.MaxOutput > 0 {
			out = strconv.FormatInt(m.MaxOutput, 10)
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\n", m.Provider, id, m.ContextWindow, out, yesNo(m.Reasoning), price)
	}
	return w.Flush()
}

func money(usd float64) string { return strconv.FormatFloat(usd, 'f', -1, 64) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// showRootHelp writes zot's help: the library's rendering of the root
// command, then rootHelpTail. It replaces cli.ShowRootCommandHelp rather
// than giving the root a template of its own: zot is built without the
// library's text/template renderer (the urfave_cli_no_template build tag;
// see the Makefile), which knows only the default layouts, and the tail is
// built only when help is shown, never at start.
func showRootHelp(cmd *cli.Command) error {
	if err := cli.DefaultShowRootCommandHelp(cmd); err != nil {
		return err
	}
	if cmd != cmd.Root() {
		return nil
	}
	_, err := io.WriteString(cmd.Root().Writer, rootHelpTail())
	return err
}

// rootHelpTail is the end of zot --help: examples and the environment
// zot reads.
func rootHelpTail() string {
	var b strings.Builder
	b.WriteString(`
EXAMPLES:
   # one prompt, the answer on stdout
   zot -p "what does main.go do?"

   # the prompt from stdin, every event as NDJSON
   zot -p - --json < task.txt

   # serve the protocol offline, on the scripted provider
   zot rpc --provider scripted

   # a local OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio)
   zot rpc --provider openai --base-url http://localhost:11434/v1 --model qwen3

   # the models zot knows, and the version
   zot models --provider anthropic
   zot version

ENVIRONMENT:
`)
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	// The key variables come from the provider table, so they cannot drift.
	var seen []string
	for _, name := range registry.Names() {
		p, _ := registry.Find(name)
		vars := strings.Join(p.KeyVars, ", ")
		if vars == "" || slices.Contains(seen, vars) {
			continue
		}
		seen = append(seen, vars)
		var users []string
		for _, other := range registry.Names() {
			if q, _ := registry.Find(other); strings.Join(q.KeyVars, ", ") == vars {
				users = append(users, other)
			}
		}
		what := "API key of --provider " + strings.Join(users, " and ")
		if len(p.KeyVars) > 1 {
			what += " (the first one set)"
		}
		fmt.Fprintf(w, "   %s\t%s\n", vars, what)
	}
	fmt.Fprintf(w, "   %s\t%s\n", "ZOTCORE_RPC_TOKEN", "zot rpc: a client must first send hello with this token")
	fmt.Fprintf(w, "   %s\t%s\n", "ZOT_HOME", "zot's own directory: the auth file, session files (default: see XDG_STATE_HOME)")
	fmt.Fprintf(w, "   %s\t%s\n", "XDG_STATE_HOME", "on Linux the zot home is $XDG_STATE_HOME/zot (default ~/.local/state/zot)")
	fmt.Fprintf(w, "   %s\t%s\n", "ZOT_SOCKET", "zot daemon's socket, and zot daemon connect's (default: daemon.sock in the zot home)")
	fmt.Fprintf(w, "   %s\t%s\n", "ZOT_VALIDATE", "1: zot rpc checks every frame it writes against the schema (debugging)")
	fmt.Fprintf(w, "   %s\t%s\n", "OTEL_EXPORTER_OTLP_ENDPOINT", "send OpenTelemetry traces there over OTLP/HTTP (with the other OTEL_* variables: docs/telemetry.md)")
	w.Flush()
	b.WriteString(`
Run 'zot <command> --help' for a command's options. The protocol is in docs/rpc.md.
`)
	return b.String()
}

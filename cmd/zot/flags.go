package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/home"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/registry"
	"zot.dev/zot/internal/skills"
	"zot.dev/zot/internal/tools"
)

// modeFlags choose what the root command does. They are the root's own
// (Local): a subcommand is a mode of its own.
func modeFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "print", Aliases: []string{"p"}, Local: true,
			Usage: "run one prompt and print the answer; - reads the prompt from stdin"},
		&cli.BoolFlag{Name: "rpc", Local: true,
			Usage: "serve the NDJSON protocol on stdin/stdout (same as zot rpc)"},
	}
}

// agentFlags are the flags print mode and rpc mode take to build their
// session. They are persistent: given before or after a subcommand's
// name, they mean the same.
func agentFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "provider", Value: "anthropic", Usage: registry.Help()},
		&cli.StringFlag{Name: "model", Usage: "model id (default: the provider's default model; zot models lists them)"},
		&cli.StringFlag{Name: "cwd", Usage: "working directory of the tools (default: the current directory)"},
		&cli.StringFlag{Name: "api-key", Usage: "provider API key (default: the provider's environment variable or the auth file)"},
		&cli.StringFlag{Name: "base-url", Usage: "provider endpoint: Anthropic host root, OpenAI API root with /v1, Gemini API root"},
		&cli.StringFlag{Name: "system-prompt", Usage: "replace the default system prompt (default: the zot home's SYSTEM.md when there is one, else zot's own)"},
		&cli.StringSliceFlag{Name: "append-system-prompt", Usage: "text added after the system prompt; repeatable, each after a blank line"},
		&cli.StringFlag{Name: "reasoning", Usage: "reasoning level: none, minimal, low, medium, high, xhigh or max, as the model takes them (zot models --json lists each model's)"},
		&cli.IntFlag{Name: "max-steps", Value: 50, Usage: "most model calls per prompt"},
		&cli.FloatFlag{Name: "max-cost", Usage: "cost budget of each prompt in US dollars: a prompt that spends it ends with stop max_cost (0: none)"},
		&cli.BoolFlag{Name: "no-tools", Usage: "turn every tool off"},
		&cli.StringFlag{Name: "tools", Usage: "comma-separated tools to enable (read,write,edit,bash,grep,find,ls,skill,task)"},
		&cli.StringFlag{Name: "script", Usage: "with --provider scripted: the JSON script to play (default: the built-in one)"},
		&cli.StringFlag{Name: "models-file", Usage: "JSON file of models that add to or override the catalog"},
		&cli.BoolFlag{Name: "no-auto-compact", Usage: "never compact the transcript automatically"},
		&cli.BoolFlag{Name: "no-session", Usage: "keep the transcript in memory only (the default)"},
		&cli.StringFlag{Name: "session", Usage: "keep the transcript in this session: a stored session's id (zot sessions list) or a file; resume it, and append every message (synced)"},
		&cli.BoolFlag{Name: "continue", Aliases: []string{"c"}, Usage: "resume the newest session of the working directory (kept under the zot home), or start one there"},
		&cli.StringFlag{Name: "permission", Usage: "the first permission mode, for write, edit, bash and tools that may change things: ask (the client answers each; the default of zot daemon and zot acp), allow (mode auto: run all; the default of zot rpc and -p) or deny (mode read_only, and no other)"},
		&cli.BoolFlag{Name: "approve", Usage: "the same as --permission ask: ask the client before each write, edit and bash call (zot rpc: permission_request, answered with answer_permission)"},
		&cli.StringFlag{Name: "sandbox", Usage: "what the tools may change, enforced by the kernel for bash: read-only, workspace-write (the working directory and the temp dir), full, or off where no sandbox can be enforced (default: config.json's, else by the permission mode: auto → workspace-write, read_only → read-only, ask and accept_edits → full)"},
		&cli.StringFlag{Name: "network", Usage: "whether bash's commands reach the network: on or off (default: off when the sandbox confines writes)"},
		&cli.StringSliceFlag{Name: "sandbox-writable", Usage: "a further path the tools may change under workspace-write (a build cache, say); repeatable"},
	}, slices.Concat(agentsFlags(), mcpFlags(), skillFlags(), otelFlags())...) // agents.go, skills.go, otel.go
}

// rpcFlags are the flags of rpc mode, `zot rpc` and `zot --rpc` alike.
// They are persistent, as the agent flags are.
func rpcFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.IntFlag{Name: "max-line-bytes", Value: 64 << 20, Usage: "rpc mode: the longest input line accepted; longer lines get line_too_long"},
		&cli.DurationFlag{Name: "approval-timeout", Value: 5 * time.Minute, Usage: "rpc mode, with --approve or --permission ask: how long a call waits for its answer before it is rejected; 0 waits until an abort"},
	}, append(extFlags(), inspectFlags(false)...)...)
}

// outputFlags choose the output's form for programs: print mode's event
// stream, the model list, the version.
func outputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "json", Usage: "print JSON for programs: with -p the event stream as NDJSON, ending with done; with models and version one object; with ext list an array"},
	}
}

// modelsFlags are the agent flags zot models reads.
var modelsFlags = []string{"provider", "models-file", "refresh", "api-key", "base-url"}

// flagNames returns the names of the flags of lists.
func flagNames(lists ...[]cli.Flag) []string {
	var out []string
	for _, l := range lists {
		for _, f := range l {
			out = append(out, f.Names()[0])
		}
	}
	return out
}

// onlyFlags fails with a usage error when a flag set on the command line
// is not one mode reads: a flag that would do nothing is refused, never
// ignored.
func onlyFlags(cmd *cli.Command, mode string, allowed []string, also ...string) error {
	for _, c := range cmd.Lineage() {
		for _, f := range c.Flags {
			name := f.Names()[0]
			if !f.IsSet() || name == "help" || name == "version" || slices.Contains(allowed, name) || slices.Contains(also, name) {
				continue
			}
			label := "--" + name
			if name == "print" {
				label = "-p"
			}
			return usagef("%s does not apply to %s", label, mode)
		}
	}
	return nil
}

// agentConfig is what the agent flags configure: one session
// configuration, the one every door uses. Its provider settings (APIKey,
// BaseURL, Script) and ModelsFile are also the host's (newHost), which
// serves every session of the daemon and loads the models file with the
// zot home's models cache.
type agentConfig = engine.SessionConfig

// runtimeConfig builds the configuration from the flags, resolving the
// API key from the flag, the environment or the auth file. When the key is
// all that is missing, the error wraps a *registry.MissingKeyError and
// the configuration is complete but for the key.
func runtimeConfig(cmd *cli.Command, stderr io.Writer) (agentConfig, error) {
	provider, model := cmd.String("provider"), cmd.String("model")
	rememberedDefaults(cmd, stderr, &provider, &model) // config.go
	if !registry.Known(provider) {
		return agentConfig{}, &exitError{code: 2, msg: (&registry.UnknownError{Name: provider}).Error()}
	}
	if err := checkPluginFlags(cmd); err != nil { // ext.go
		return agentConfig{}, err
	}
	if err := startTelemetry(cmd, stderr); err != nil { // otel.go
		return agentConfig{}, err
	}
	var err error
	cfg := agentConfig{
		Provider:           provider,
		BaseURL:            cmd.String("base-url"),
		Script:             cmd.String("script"),
		ModelsFile:         cmd.String("models-file"),
		Model:              model,
		CWD:                cmd.String("cwd"),
		SystemPrompt:       cmd.String("system-prompt"),
		AppendSystemPrompt: joinPrompts(cmd.StringSlice("append-system-prompt")),
		Reasoning:          cmd.String("reasoning"),
		MaxSteps:           cmd.Int("max-steps"),
		MaxCostUSD:         cmd.Float("max-cost"),
		NoTools:            cmd.Bool("no-tools"),
		AutoCompactOff:     cmd.Bool("no-auto-compact"),
	}
	if cfg.Mode, cfg.LockMode, err = permissionFlags(cmd); err != nil {
		return cfg, err
	}
	// Extension and MCP tools may change anything: the mode decides for
	// them too, unless they say they change nothing.
	cfg.ApproveOtherTools = true
	cfg.Extensions, cfg.MCP = pluginConfig(cmd, stderr)            // ext.go
	cfg.Permissions = permissionRules(cmd, stderr)                 // config.go
	if cfg.Sandbox, err = sandboxConfig(cmd, stderr); err != nil { // sandbox.go
		return cfg, err
	}
	if cfg.Agents, err = agentsConfig(cmd, stderr); err != nil { // agents.go
		return cfg, err
	}
	if err := skillConfig(cmd, stderr, &cfg); err != nil { // skills.go
		return cfg, err
	}
	if cmd.IsSet("tools") {
		if cfg.NoTools {
			return cfg, &exitError{code: 2, msg: "--tools and --no-tools contradict each other"}
		}
		// An empty list (--tools "", ",", " ") means no tools, as
		// Tools: []string{} does in the SDK; never all of them.
		cfg.Tools = []string{}
		for _, t := range strings.Split(cmd.String("tools"), ",") {
			if t = strings.TrimSpace(t); t != "" {
				cfg.Tools = append(cfg.Tools, t)
			}
		}
		// A name that is not a tool is a typo on the command line: say
		// so before anything starts, with the names there are.
		if _, err := tools.Select(append(tools.Builtins(tools.Config{}), skills.NewTool(nil)), withoutTask(cfg.Tools), false); err != nil {
			return cfg, usagef("--tools: %s", strings.TrimPrefix(err.Error(), "selecting tools: "))
		}
	}
	switch {
	case cmd.Bool("no-session") && (cmd.IsSet("session") || cmd.Bool("continue")):
		return cfg, &exitError{code: 2, msg: "--no-session contradicts --session and --continue"}
	case cmd.IsSet("session") && cmd.Bool("continue"):
		return cfg, &exitError{code: 2, msg: "--session and --continue contradict each other"}
	case cmd.IsSet("session"):
		name := cmd.String("session")
		if name == "" {
			return cfg, &exitError{code: 2, msg: "--session needs a session id or a file name"}
		}
		if cfg.SessionFile, cfg.SessionID, err = storedSessionFile(context.Background(), name, stderr); err != nil { // sessions.go
			return cfg, err
		}
	case cmd.Bool("continue"):
		cwd := cfg.CWD
		if cwd == "" {
			cwd, _ = os.Getwd()
		}
		abs, err := filepath.Abs(cwd)
		if err != nil {
			return cfg, &exitError{code: 2, msg: err.Error()}
		}
		s, err := openStore(context.Background(), stderr) // sessions.go
		if err != nil {
			return cfg, err
		}
		if cfg.SessionFile, err = s.Newest(context.Background(), abs); err != nil {
			return cfg, &exitError{code: 1, msg: err.Error()}
		}
		cfg.SessionID = strings.TrimSuffix(filepath.Base(cfg.SessionFile), ".jsonl")
	}
	if cfg.MaxSteps < 1 {
		return cfg, &exitError{code: 2, msg: fmt.Sprintf("--max-steps must be at least 1, got %d", cfg.MaxSteps)}
	}
	if cfg.MaxCostUSD < 0 || math.IsNaN(cfg.MaxCostUSD) || math.IsInf(cfg.MaxCostUSD, 0) {
		return cfg, &exitError{code: 2, msg: fmt.Sprintf("--max-cost must be a number of dollars, 0 or more, got %v", cfg.MaxCostUSD)}
	}
	if cfg.Reasoning != "" && !slices.Contains(llm.ReasoningLevels, cfg.Reasoning) {
		return cfg, &exitError{code: 2, msg: fmt.Sprintf("--reasoning must be one of %s, got %q", strings.Join(llm.ReasoningLevels, ", "), cfg.Reasoning)}
	}
	if cfg.Script != "" && cfg.Provider != "scripted" {
		return cfg, &exitError{code: 2, msg: "--script only applies to --provider scripted"}
	}
	if cfg.Provider == "scripted" && (cmd.IsSet("api-key") || cmd.IsSet("base-url")) {
		return cfg, &exitError{code: 2, msg: "--api-key and --base-url do nothing for --provider scripted"}
	}
	if p, _ := registry.Find(cfg.Provider); !p.Keyless {
		authFile := ""
		if h, err := zotHome(stderr); err == nil {
			authFile = h.AuthFile()
		}
		key, err := registry.APIKey(cfg.Provider, cmd.String("api-key"), os.Getenv, authFile)
		if err != nil {
			return cfg, &exitError{code: 1, msg: err.Error()}
		}
		if key == "" && registry.NeedsKey(cfg.Provider, cfg.BaseURL) {
			missing := &registry.MissingKeyError{Provider: cfg.Provider, AuthFile: authFile}
			return cfg, &exitError{code: 1, msg: missing.Error(), cause: missing}
		}
		cfg.APIKey = key
	} else if cfg.Provider != "scripted" {
		cfg.APIKey = cmd.String("api-key") // a keyless server may still take one
	}
	return cfg, nil
}

// permissionFlags returns the first permission mode --permission or
// --approve chooses, and whether the session is locked in it; "" when
// neither is given (each door has its default).
func permissionFlags(cmd *cli.Command) (engine.PermissionMode, bool, error) {
	policy := cmd.String("permission")
	if cmd.Bool("approve") {
		if cmd.IsSet("permission") && policy != "ask" {
			return "", false, usagef("--approve means --permission ask; it contradicts --permission %s", policy)
		}
		policy = "ask"
	}
	if policy == "" && !cmd.IsSet("permission") {
		return "", false, nil
	}
	mode, locked, err := engine.ModeOfPermission(policy)
	if err != nil {
		return "", false, usagef("--permission must be ask, allow or deny, got %q", policy)
	}
	return mode, locked, nil
}

// joinPrompts joins the --append-system-prompt texts in the order given,
// a blank line between two, leaving out empty ones.
func joinPrompts(texts []string) string {
	var keep []string
	for _, t := range texts {
		if strings.TrimSpace(t) != "" {
			keep = append(keep, t)
		}
	}
	return strings.Join(keep, "\n\n")
}

// startSession builds the host and the one session a command serves.
func startSession(cfg agentConfig, log io.Writer, with ...func(*engine.HostConfig)) (*engine.Host, *engine.Session, error) {
	h, _ := home.Current() // without a home, no cached model list
	host, err := newHost(cfg, h, log, with...)
	if err != nil {
		return nil, nil, err
	}
	sc := sessionOfHost(cfg)
	sc.Log = log
	sess, err := host.NewSession(sc)
	if err != nil {
		return nil, nil, &exitError{code: 1, msg: err.Error()}
	}
	return host, sess, nil
}

// newHost is the host of cfg: its provider's settings, and the catalog
// with cfg's models file and the zot home's models cache; each of with
// adds to its configuration (the inspector's tap).
func newHost(cfg agentConfig, h home.Home, log io.Writer, with ...func(*engine.HostConfig)) (*engine.Host, error) {
	catalog, err := loadCatalog(cfg.ModelsFile, h, log)
	if err != nil {
		return nil, err
	}
	hc := engine.HostConfig{
		Catalog: catalog,
		Providers: map[string]engine.ProviderSettings{
			cfg.Provider: {APIKey: cfg.APIKey, BaseURL: cfg.BaseURL, Script: cfg.Script},
		},
	}
	for _, f := range with {
		f(&hc)
	}
	withTelemetry(&hc) // otel.go
	return engine.NewHost(hc), nil
}

// sessionOfHost is cfg for a session of newHost(cfg): the models file is
// the host's already (with the models cache), not loaded again per
// session.
func sessionOfHost(cfg agentConfig) engine.SessionConfig {
	cfg.ModelsFile = ""
	return cfg
}

// homeNotice makes the legacy-directory notice print once per process.
var homeNotice sync.Once

// zotHome is zot's own directory (see package home). When it is the
// legacy ~/.zot, stderr is told so once.
func zotHome(stderr io.Writer) (home.Home, error) {
	h, err := home.Current()
	if err != nil {
		return h, err
	}
	if n := h.Notice(); n != "" {
		homeNotice.Do(func() { fmt.Fprintln(stderr, n) })
	}
	return h, nil
}

// Package bench measures binaries that speak zot's NDJSON rpc protocol
// against a loopback fake model provider, side by side with a floor program
// (a minimal SSE-to-NDJSON relay), and reports medians and their ratios to
// the floor as a Markdown table.
//
// Every binary is started as `PATH rpc --provider P --model M --base-url URL
// --api-key KEY`, by default as a user runs zot: with a zot home holding
// extensions, logs and past sessions, in a project whose .zot holds an
// extension and an MCP server (see Config.Setup). For each binary and
// provider, each repetition runs three processes: one streams a long answer
// (events per second, CPU time), one sends short prompts in sequence
// (latency, CPU time per prompt), one makes bash and read tool round trips.
// Every process is first pinged (spawn to ping, and its resident memory
// then) and its peak resident set size is read before its stdin is closed.
//
// A last section measures what the floor cannot do, for zot and the --vs
// binaries with the first provider: the time from an abort to the done of
// the prompt it cut while a tool is busy (bash sleeping, read scanning a
// huge line), and the peak resident set size of a process that takes one
// huge prompt line, against a goal of three times the line. The
// harness decodes only the frame types it reads, and the fake provider only
// the messages its answer depends on, so that their work on the shared
// cores stays small.
package bench

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// Config is what one benchmark run measures.
type Config struct {
	// Zot and Floor are the paths of the binary under test and of the
	// floor program; Vs are further binaries speaking the protocol.
	Zot, Floor string
	Vs         []string
	// Reps is how many times every measurement is repeated.
	Reps int
	// Providers are the fake provider's formats to use: "anthropic",
	// "openai" or both.
	Providers []string
	// Deltas is the number of 16-byte text deltas of the long answer.
	Deltas int
	// Seq is the number of short prompts sent in sequence to one process.
	Seq int
	// Timeout bounds every single operation (a ping, a prompt) and the wait
	// for a process to exit after its stdin closes.
	Timeout time.Duration
	// AnthropicModel and OpenAIModel are passed as --model. The defaults
	// are models every zot since 2025 knows (a binary refuses a model it
	// does not know), and that take tools on the Chat Completions API the
	// fake provider serves.
	AnthropicModel, OpenAIModel string
	// Extras adds the section on abort and large input, measured with
	// the first provider for zot and the --vs binaries.
	Extras bool
	// BigPrompt is the length in bytes of the one prompt line whose peak
	// RSS that section measures.
	BigPrompt int
	// AbortAfter is how long after a tool starts that section sends the
	// abort.
	AbortAfter time.Duration
	// Sandbox adds the section on what zot's sandbox adds to a bash round
	// trip, measured with the first provider for zot only.
	Sandbox bool
	// Daemon adds the section on zot daemon and zot acp against zot rpc,
	// measured with the first provider for zot only.
	Daemon bool
	// DaemonIdle is the number of idle sessions whose memory that section
	// measures; DaemonStreams the number of sessions streaming at once,
	// DaemonDeltas the deltas of each of their answers.
	DaemonIdle, DaemonStreams, DaemonDeltas int
	// DaemonOnly measures that section alone, without the sections of
	// every provider.
	DaemonOnly bool
	// Setup is where the binaries run: SetupUser (a populated zot home
	// and a project with an extension and an MCP server) or SetupBare.
	Setup string
	// HomeExts are the extension folders (a manifest and what it runs)
	// the user setup installs in the zot home, ProjectExts those it puts
	// in the project's .zot/extensions; MCPBin is the MCP server (stdio)
	// the project's .zot/mcp.json names.
	HomeExts, ProjectExts []string
	MCPBin                string
	// Trips is how many bash and how many read round trips the tool
	// session makes, alternating; their medians are reported.
	Trips int
	// TrustProject has zot trust the user setup's project (`zot trust`,
	// into the setup's zot home) before the run, so that the project's
	// extension and MCP server run; without it zot leaves them out, as it
	// does in a folder its user has not trusted.
	TrustProject bool
}

// Providers the harness can use.
const (
	ProviderAnthropic = "anthropic"
	ProviderOpenAI    = "openai"
)

// DefaultConfig returns the configuration of a full `make bench` run.
func DefaultConfig() Config {
	return Config{
		Zot:            "./bin/zot",
		Floor:          "./bin/zot-floor",
		Reps:           5,
		Providers:      []string{ProviderAnthropic, ProviderOpenAI},
		Deltas:         10_000,
		Seq:            100,
		Timeout:        60 * time.Second,
		AnthropicModel: "claude-sonnet-4-5",
		OpenAIModel:    "gpt-5",
		Extras:         true,
		BigPrompt:      64 << 20,
		AbortAfter:     50 * time.Millisecond,
		Sandbox:        true,
		Daemon:         true,
		DaemonIdle:     1000,
		DaemonStreams:  100,
		DaemonDeltas:   2000,
		Setup:          SetupUser,
		HomeExts:       []string{"./bin/bench-ext/todo", "./examples/extensions/weather"},
		ProjectExts:    []string{"./bin/bench-ext/hello"},
		MCPBin:         "./bin/zot-bench-mcp",
		Trips:          5,
		TrustProject:   true,
	}
}

// maxBigPrompt bounds Config.BigPrompt; the harness reads lines of up to
// maxFrame, and zot echoes the prompt in its user_message event.
const maxBigPrompt = 128 << 20

// ParseFlags reads a configuration from command-line arguments; usage and
// errors go to stderr. It returns flag.ErrHelp when help was asked for.
func ParseFlags(args []string, stderr io.Writer) (Config, error) {
	cfg := DefaultConfig()
	fs := flag.NewFlagSet("zot-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.Zot, "zot", cfg.Zot, "path of the zot binary")
	fs.StringVar(&cfg.Floor, "floor", cfg.Floor, "path of the floor program")
	fs.Func("vs", "path of another binary speaking the protocol (repeatable)", func(s string) error {
		if s == "" {
			return errors.New("empty path")
		}
		cfg.Vs = append(cfg.Vs, s)
		return nil
	})
	fs.IntVar(&cfg.Reps, "reps", cfg.Reps, "repetitions of every measurement")
	provider := fs.String("provider", "both", "provider format: anthropic, openai or both")
	fs.IntVar(&cfg.Deltas, "deltas", cfg.Deltas, "16-byte text deltas in the long answer")
	fs.IntVar(&cfg.Seq, "seq", cfg.Seq, "short prompts sent in sequence to one process")
	fs.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "limit of every single operation")
	fs.StringVar(&cfg.AnthropicModel, "anthropic-model", cfg.AnthropicModel, "model passed with the anthropic provider")
	fs.StringVar(&cfg.OpenAIModel, "openai-model", cfg.OpenAIModel, "model passed with the openai provider")
	fs.BoolVar(&cfg.Extras, "extras", cfg.Extras, "measure abort latency and a huge prompt's peak RSS (zot and --vs only)")
	fs.IntVar(&cfg.BigPrompt, "big-prompt", cfg.BigPrompt, "bytes of the prompt line whose peak RSS is measured")
	fs.DurationVar(&cfg.AbortAfter, "abort-after", cfg.AbortAfter, "wait after a tool starts before aborting it")
	fs.BoolVar(&cfg.Sandbox, "sandbox", cfg.Sandbox, "measure what zot's sandbox adds to a bash round trip (zot only)")
	fs.BoolVar(&cfg.Daemon, "daemon", cfg.Daemon, "measure zot daemon and zot acp against zot rpc (zot only)")
	fs.IntVar(&cfg.DaemonIdle, "daemon-idle", cfg.DaemonIdle, "idle sessions opened in one daemon for its memory per session")
	fs.IntVar(&cfg.DaemonStreams, "daemon-streams", cfg.DaemonStreams, "sessions of one daemon streaming at once")
	fs.IntVar(&cfg.DaemonDeltas, "daemon-deltas", cfg.DaemonDeltas, "16-byte text deltas in each answer of the streaming sessions")
	fs.BoolVar(&cfg.DaemonOnly, "daemon-only", cfg.DaemonOnly, "measure the daemon section alone (implies --daemon)")
	fs.StringVar(&cfg.Setup, "setup", cfg.Setup, "user: a populated zot home and a project with an extension and an MCP server; bare: empty ones")
	fs.Func("home-ext", "extension folder the user setup installs in the zot home (repeatable; replaces the default list)", folderList(&cfg.HomeExts))
	fs.Func("project-ext", "extension folder the user setup puts in the project's .zot/extensions (repeatable; replaces the default list)", folderList(&cfg.ProjectExts))
	fs.StringVar(&cfg.MCPBin, "mcp-bin", cfg.MCPBin, "stdio MCP server the user setup's project configures")
	fs.IntVar(&cfg.Trips, "trips", cfg.Trips, "bash and read round trips of the tool session, each")
	fs.BoolVar(&cfg.TrustProject, "trust-project", cfg.TrustProject, "user setup: zot trusts the project folder (zot trust) before the run; false measures an untrusted project")
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	switch *provider {
	case "both":
		cfg.Providers = []string{ProviderAnthropic, ProviderOpenAI}
	case ProviderAnthropic, ProviderOpenAI:
		cfg.Providers = []string{*provider}
	default:
		return Config{}, fmt.Errorf("--provider %q: want anthropic, openai or both", *provider)
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// folderList returns a flag function that replaces *list with the values
// given, in order.
func folderList(list *[]string) func(string) error {
	given := false
	return func(s string) error {
		if s == "" {
			return errors.New("empty path")
		}
		if !given {
			*list, given = nil, true
		}
		*list = append(*list, s)
		return nil
	}
}

// Validate reports the first setting that cannot be run.
func (c Config) Validate() error {
	switch {
	case c.Zot == "" || c.Floor == "":
		return errors.New("--zot and --floor need a path")
	case c.Reps < 1:
		return fmt.Errorf("--reps %d: need at least 1", c.Reps)
	case c.Deltas < 1 || c.Deltas > 1_000_000:
		return fmt.Errorf("--deltas %d: want 1..1000000", c.Deltas)
	case c.Seq < 1:
		return fmt.Errorf("--seq %d: need at least 1", c.Seq)
	case c.Timeout <= 0:
		return fmt.Errorf("--timeout %v: must be positive", c.Timeout)
	case len(c.Providers) == 0:
		return errors.New("no provider to measure")
	case c.Extras && (c.BigPrompt < 1024 || c.BigPrompt > maxBigPrompt):
		return fmt.Errorf("--big-prompt %d: want 1024..%d", c.BigPrompt, maxBigPrompt)
	case c.Daemon && (c.DaemonIdle < 1 || c.DaemonStreams < 1 || c.DaemonDeltas < 1):
		return errors.New("--daemon-idle, --daemon-streams and --daemon-deltas need at least 1")
	case c.Setup != SetupUser && c.Setup != SetupBare:
		return fmt.Errorf("--setup %q: want user or bare", c.Setup)
	case c.Setup == SetupUser && c.MCPBin == "":
		return errors.New("--setup user needs --mcp-bin")
	case c.Trips < 1:
		return fmt.Errorf("--trips %d: need at least 1", c.Trips)
	case c.Extras && (c.AbortAfter < 0 || c.AbortAfter >= c.Timeout):
		return fmt.Errorf("--abort-after %v: want 0 up to --timeout", c.AbortAfter)
	}
	for _, p := range c.Providers {
		if p != ProviderAnthropic && p != ProviderOpenAI {
			return fmt.Errorf("unknown provider %q", p)
		}
	}
	return nil
}

// model returns the --model value for provider p.
func (c Config) model(p string) string {
	if p == ProviderOpenAI {
		return c.OpenAIModel
	}
	return c.AnthropicModel
}

// Command zot is the zot agent runtime's command line: `zot rpc` serves
// the NDJSON protocol on stdin and stdout, `zot -p "prompt"` runs one
// prompt and prints the answer (or, with --json, the event stream), and
// `zot models` lists the model catalog.
//
// The agent flags (--provider, --model, …) belong to the root command and
// are persistent: they mean the same before and after a subcommand, so
// `zot --provider scripted rpc` and `zot rpc --provider scripted` are one
// command line. A flag that does nothing in the mode chosen is a usage
// error, never ignored.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/urfave/cli/v3"
)

// received is the signal that interrupted the run, if any.
var received atomic.Int32

// onHangup, when set, is what SIGHUP does instead of ending the run (zot
// daemon reloads its token file and certificate).
var onHangup atomic.Pointer[func()]

// exitError carries a process exit status out of a command. Code 2 is a
// usage error: run prints hint, naming the help to read, after msg.
type exitError struct {
	code  int
	msg   string
	hint  string
	cause error // what went wrong, for errors.As; may be nil
}

func (e *exitError) Error() string { return e.msg }

func (e *exitError) Unwrap() error { return e.cause }

// usagef returns a usage error (exit status 2). The command's action
// wrapper adds the hint.
func usagef(format string, args ...any) error {
	return &exitError{code: 2, msg: fmt.Sprintf(format, args...)}
}

func main() {
	// zot is a sidecar that embedding apps run next to their own work:
	// collect garbage at half the default heap growth so its footprint
	// stays small (GOGC still overrides this).
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
	if leanBuild { // full.go: the full build serves what the lean one left out
		if code, done := becomeFull(os.Args, isTerminal(streams{in: os.Stdin, out: os.Stdout}), os.Stderr); done {
			os.Exit(code)
		}
	}
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin *os.File, stdout, stderr *os.File) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A write to a closed pipe fails with EPIPE instead of killing zot, so
	// zot can abort its work and stop its tools first.
	signal.Ignore(syscall.SIGPIPE)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	watcherDone := make(chan struct{})
	go func() {
		defer close(watcherDone)
		for s := range sigs {
			if s == syscall.SIGHUP {
				if reload := onHangup.Load(); reload != nil {
					(*reload)() // zot daemon reads its tokens again
					continue
				}
			}
			if sig, isSys := s.(syscall.Signal); isSys {
				received.CompareAndSwap(0, int32(sig))
			}
			cancel()
			return
		}
	}()
	// The embedder is gone when nobody reads stdout any more: that ends
	// zot as SIGPIPE would, after the same clean-up as a signal.
	stopWatch := watchOutput(stdout, func() {
		received.CompareAndSwap(0, int32(syscall.SIGPIPE))
		cancel()
	})
	defer func() {
		stopWatch()
		signal.Stop(sigs)
		close(sigs)
		<-watcherDone
	}()
	app := newApp(streams{in: stdin, out: stdout, err: stderr}, args)
	err := app.Run(ctx, args)
	stopTelemetry() // otel.go: the spans not sent yet
	return report(err, stderr)
}

// report prints what went wrong, if anything, and returns the exit
// status: one line on stderr, "zot: " and the message (errors of
// zot's own packages often carry that prefix, or the command's, "zot
// daemon: ", already, and get "zot: " once),
// then for a usage error the hint.
func report(err error, stderr *os.File) int {
	if err == nil {
		return 0
	}
	ee := &exitError{code: 1, msg: err.Error()}
	errors.As(err, &ee)
	if ee.msg != "" {
		msg := ee.msg
		for strings.HasPrefix(msg, "zot: ") || commandPrefix().MatchString(msg) {
			msg = strings.TrimPrefix(msg, "zot: ")
			msg = commandPrefix().ReplaceAllString(msg, "")
		}
		fmt.Fprintln(stderr, "zot:", msg)
	}
	if ee.code == 2 && ee.hint != "" {
		fmt.Fprintln(stderr, ee.hint)
	}
	return ee.code
}

func newApp(std streams, args []string) *cli.Command {
	return newCLI(std, args, spawnedCommand(args))
}

// spawnedCommand names the one command a command line can reach when it
// starts with `rpc` or `acp`, the commands that embedding programs and
// editors start zot with, once for every session; "" otherwise.
func spawnedCommand(args []string) string {
	if len(args) > 1 && (args[1] == "rpc" || args[1] == "acp") {
		return args[1]
	}
	return ""
}

// subcommands returns the root's commands: all of them, or only the
// command named. Building the others (the ext, daemon, sessions and
// config trees, with their flags and help) is start-up work and memory
// that every spawned `zot rpc` paid for; a command line that starts with
// a command's name cannot reach another, so it parses, runs, helps and
// fails the same with that command alone (TestSpawnedCommandsParseAlike).
func subcommands(std streams, only string, all func() []*cli.Command) []*cli.Command {
	switch only {
	case "rpc":
		return []*cli.Command{rpcCommand(std)}
	case "acp":
		return []*cli.Command{acpCommand(std)}
	}
	return all()
}

// newCLI builds the command tree; with only set, the root holds that
// command alone (subcommands).
func newCLI(std streams, args []string, only string) *cli.Command {
	// --version prints what `zot version` does.
	cli.VersionPrinter = func(cmd *cli.Command) { printVersion(cmd.Root().Writer, false) }
	// zot's help ends with examples and the environment (showRootHelp).
	cli.ShowRootCommandHelp = showRootHelp
	// A repeatable flag is shown once in help, its usage says so.
	stringify := cli.FlagStringer
	cli.FlagStringer = func(f cli.Flag) string { return repeatPlaceholder().ReplaceAllString(stringify(f), "") }
	root := &cli.Command{
		Name:  "zot",
		Usage: "an agent runtime that other programs embed",
		UsageText: `zot ["prompt"] [options]    chat in the terminal (-c continues, -r resumes a session)
zot attach [socket]          chat in the terminal with a running zot daemon's sessions
zot -p "prompt" [options]   run one prompt and print the answer
zot rpc [options]            serve the NDJSON protocol on stdin/stdout
zot daemon [options]         serve the Agent Client Protocol on a Unix socket
zot acp [options]            serve the Agent Client Protocol on stdin/stdout
zot models [--provider P]    list the models zot knows
zot skills list|show         list the skills a session here offers, or show one
zot version                  print the version`,
		Version:                   buildVersion(),
		HideHelpCommand:           true, // zot help is below, with zot's usage errors
		Writer:                    std.out,
		ErrWriter:                 std.err,
		EnableShellCompletion:     true,
		DisableSliceFlagSeparator: true,
		Flags:                     slices.Concat(modeFlags(), outputFlags(), agentFlags(), rpcFlags(), terminalFlags()),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			prompt := cmd.String("print")
			switch {
			case cmd.IsSet("print") && (prompt == "--help" || prompt == "-h"):
				return cli.ShowRootCommandHelp(cmd)
			case cmd.Bool("rpc"):
				if err := onlyFlags(cmd, "rpc mode", flagNames(agentFlags(), rpcFlags()), "rpc"); err != nil {
					return err
				}
				return serveRPC(ctx, cmd, std)
			case cmd.IsSet("print"):
				if err := onlyFlags(cmd, "print mode (-p)", flagNames(agentFlags(), outputFlags(), extFlags()), "print"); err != nil {
					return err
				}
				prompt, err := promptText(cmd, prompt, std)
				if err != nil {
					return err
				}
				return printMode(ctx, cmd, prompt, std)
			case cmd.IsSet("json"):
				return usagef(`--json needs -p "prompt", or goes with zot models or zot version`)
			}
			return rootDefault(ctx, cmd, std) // terminal.go
		},
		Commands: subcommands(std, only, func() []*cli.Command {
			return []*cli.Command{
				extCommand(std),
				rpcCommand(std),
				daemonCommand(std),
				acpCommand(std),
				workerCommand(std),   // fleet.go
				attachCommand(std),   // terminal.go
				trustCommand(std),    // trust.go
				untrustCommand(std),  // trust.go
				sessionsCommand(std), // sessions.go
				configCommand(std),   // config.go
				skillsCommand(std),   // skills.go
				agentsCommand(std),   // agents_cmd.go
				{
					Name:            "models",
					HideHelpCommand: true,
					Usage:           "list the models zot knows, with their context windows and prices (no key needed)",
					Description: `Lists the model catalog: the built-in models, those of --models-file, and
those the providers' models endpoints listed at the last --refresh, for
every provider or only --provider's. The model marked * is the one zot
uses when --model is not given. --json prints {"models":[…]}, the data
get_models answers in zot rpc.

--refresh first asks the models endpoint of each provider that has a key
(or of --provider, with --api-key and --base-url as for a session) and
caches the ids and limits it lists in the zot home (models-cache.json);
sessions then know those models' limits. Prices are never learned this
way: a model the catalog does not hold stays unpriced.`,
					Flags: []cli.Flag{&cli.BoolFlag{Name: "refresh", Usage: "ask the providers' models endpoints first and cache what they list"}},
					Action: func(ctx context.Context, cmd *cli.Command) error {
						if cmd.Args().Len() > 0 {
							return usagef("zot models takes no arguments, got %q (use --provider)", cmd.Args().First())
						}
						if err := onlyFlags(cmd, "zot models", slices.Concat(modelsFlags, flagNames(outputFlags()))); err != nil {
							return err
						}
						return listModels(ctx, cmd, std.out, std.err)
					},
				},
				{
					Name:            "version",
					HideHelpCommand: true,
					Usage:           "print the version, protocol version and commit",
					Action: func(ctx context.Context, cmd *cli.Command) error {
						if cmd.Args().Len() > 0 {
							return usagef("zot version takes no arguments, got %q", cmd.Args().First())
						}
						if err := onlyFlags(cmd, "zot version", flagNames(outputFlags())); err != nil {
							return err
						}
						return printVersion(std.out, cmd.Bool("json"))
					},
				},
				{
					Name:            "help",
					HideHelpCommand: true,
					Usage:           "show help for zot or one of its commands",
					ArgsUsage:       "[command]",
					Action: func(ctx context.Context, cmd *cli.Command) error {
						root := cmd.Root()
						switch cmd.Args().Len() {
						case 0:
							return cli.ShowRootCommandHelp(root)
						case 1:
							name := cmd.Args().First()
							if root.Command(name) == nil {
								return usagef("unknown command %q", name)
							}
							return cli.ShowCommandHelp(ctx, root, name)
						}
						return usagef("zot help takes one command, got %q", cmd.Args().Slice())
					},
				},
			}
		}),
		ConfigureShellCompletionCommand: func(c *cli.Command) {
			c.Hidden = false
			c.Usage = "print a shell completion script: bash, zsh, fish or pwsh"
			c.Action = func(_ context.Context, cmd *cli.Command) error {
				if cmd.Args().Len() > 0 {
					return usagef("zot completion: unknown shell %q (bash, zsh, fish or pwsh)", cmd.Args().First())
				}
				return usagef("zot completion needs a shell: bash, zsh, fish or pwsh")
			}
		},
		// Exit statuses are run's to choose: the library must not exit.
		ExitErrHandler: func(context.Context, *cli.Command, error) {},
	}
	setUsageHandling(root, args)
	return root
}

// setUsageHandling gives every command, the completion command included,
// one way to report a usage error: one line, then the hint naming the
// command's help, on stderr, and exit status 2. stdout stays clean.
func setUsageHandling(root *cli.Command, args []string) {
	onUsage := func(_ context.Context, cmd *cli.Command, err error, _ bool) error {
		return &exitError{code: 2, msg: flagErrorText(err, args), hint: helpHint(cmd)}
	}
	var walk func(c *cli.Command)
	walk = func(c *cli.Command) {
		c.OnUsageError = onUsage
		c.DisableSliceFlagSeparator = true
		if c.Action != nil {
			c.Action = withHint(c.Action)
		}
		for _, sub := range c.Commands {
			walk(sub)
		}
	}
	walk(root)
	configure := root.ConfigureShellCompletionCommand
	root.ConfigureShellCompletionCommand = func(c *cli.Command) {
		configure(c)
		walk(c)
	}
}

// withHint makes the usage errors action returns name the help of the
// command it belongs to.
func withHint(action cli.ActionFunc) cli.ActionFunc {
	return func(ctx context.Context, cmd *cli.Command) error {
		err := action(ctx, cmd)
		var ee *exitError
		if errors.As(err, &ee) && ee.code == 2 && ee.hint == "" {
			ee.hint = helpHint(cmd)
		}
		return err
	}
}

// helpHint is the line after a usage error: the help of the command that
// was run (of zot itself for zot help).
func helpHint(cmd *cli.Command) string {
	if cmd.Name == "help" {
		cmd = cmd.Root()
	}
	return fmt.Sprintf("Run '%s --help' for usage.", cmd.FullName())
}

// flagErrorText rewords the flag parser's errors in zot's words, naming
// the flag as it was typed in args.
func flagErrorText(err error, args []string) string {
	s := err.Error()
	if name, ok := strings.CutPrefix(s, "flag provided but not defined: -"); ok {
		return "unknown flag " + asTyped(name, args)
	}
	if name, ok := strings.CutPrefix(s, "flag needs an argument: "); ok {
		return fmt.Sprintf("flag %s needs a value", asTyped(strings.TrimLeft(name, "-"), args))
	}
	if rest, ok := strings.CutPrefix(s, "invalid value "); ok {
		// invalid value "x" for flag -name: reason
		if val, rest, ok := strings.Cut(rest, " for flag -"); ok {
			if name, reason, ok := strings.Cut(rest, ": "); ok {
				switch {
				case strings.Contains(reason, "strconv.ParseInt") && strings.Contains(reason, "out of range"):
					reason = "out of range"
				case strings.Contains(reason, "strconv.ParseInt"):
					reason = "want a whole number"
				case reason == "parse error":
					reason = "want true or false"
				}
				return fmt.Sprintf("invalid value %s for flag %s: %s", val, asTyped(name, args), reason)
			}
		}
	}
	return s
}

// asTyped returns how the flag name was written on the command line:
// with one dash or two.
func asTyped(name string, args []string) string {
	for _, a := range args {
		flag, _, _ := strings.Cut(a, "=")
		if flag == "-"+name || flag == "--"+name {
			return flag
		}
	}
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// commandPrefix matches a message that starts with the command it comes
// from, "zot daemon: ".
var commandPrefix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^zot [a-z]+: `) })

// repeatPlaceholder is how help shows a repeatable flag a second time.
var repeatPlaceholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(` \[ --[a-z-]+ [a-z]+ \]`) })

// streams are the process's standard streams.
type streams struct {
	in       *os.File
	out, err *os.File
}

// promptText returns print mode's prompt: the -p value, or with "-p -"
// all of stdin (without its trailing newlines). A -p whose value is one of
// zot's flags is a mistake (zot -p --json "question"), not a prompt.
func promptText(cmd *cli.Command, p string, std streams) (string, error) {
	if p == "-" {
		data, err := io.ReadAll(std.in)
		if err != nil {
			return "", &exitError{code: 1, msg: "reading the prompt from stdin: " + err.Error()}
		}
		return strings.TrimRight(string(data), "\r\n"), nil
	}
	if name, ok := strings.CutPrefix(p, "-"); ok {
		name, _, _ = strings.Cut(strings.TrimPrefix(name, "-"), "=")
		for _, f := range cmd.Flags {
			if slices.Contains(f.Names(), name) {
				return "", usagef("-p needs a prompt, got the flag %s (to send a prompt that starts with -, use -p - and stdin)", p)
			}
		}
	}
	return p, nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/acpserver"
	"zot.dev/zot/internal/daemon"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/fleet"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/internal/registry"
)

// doorFlags are the flags `zot daemon` and `zot acp` add to the agent
// flags, which set the defaults of every session a client opens.
func doorFlags() []cli.Flag {
	return []cli.Flag{
		&cli.DurationFlag{Name: "client-stall-timeout", Value: jsonrpc.DefaultStallTimeout, Local: true,
			Usage: "how long a client may read nothing while its outgoing queue is full before it is disconnected"},
	}
}

// sessionlessFlags are agent flags that name one session; the daemon's
// sessions come from its clients (session/new takes the cwd), so these
// would do nothing there and are refused.
var sessionlessFlags = []string{"cwd", "session", "continue", "no-session"}

// doorAllowed lists the flags zot daemon and zot acp read: the agent
// flags but the MCP ones (each session/new names its MCP servers), the
// line limit and their own. The sessionless flags pass here so that
// newDoor can say why they do not apply.
func doorAllowed(extra ...string) []string {
	var out []string
	for _, n := range flagNames(agentFlags()) {
		if !slices.Contains(flagNames(mcpFlags()), n) {
			out = append(out, n)
		}
	}
	return append(append(out, "max-line-bytes", "client-stall-timeout", "ext", "no-ext", "ext-start-timeout", "trust-project", "inspect", "inspect-ring"), extra...)
}

func daemonCommand(std streams) *cli.Command {
	return &cli.Command{
		Name:            "daemon",
		HideHelpCommand: true,
		Usage:           "serve the Agent Client Protocol (JSON-RPC 2.0) to many clients on a Unix socket (see docs/daemon.md)",
		Description: `Listens on $ZOT_SOCKET, else <zot home>/daemon.sock (a short per-user path
when that is too long for a socket), 0600 in a 0700 directory; clients of
another user are refused. One daemon per socket. Each line is one JSON-RPC
2.0 message; the methods are ACP v1's. The agent flags set the defaults of
new sessions. SIGTERM or SIGINT ends the sessions, answers what is under
way and exits 0. --ephemeral exits 1 s after the last client left, once
the turns it left have ended. --listen ws://HOST:PORT (or wss:// with
--tls-cert and --tls-key) also serves ACP over WebSocket at /acp, with
bearer tokens from --token-file; SIGHUP then reloads the tokens and the
certificate (docs/daemon.md, Remote clients).`,
		Flags: append(append(doorFlags(),
			&cli.BoolFlag{Name: "ephemeral", Local: true,
				Usage: "exit 1 s after the last client left and its turns ended (a client that connects in that second keeps it); never before the first client came"}),
			append(append(listenFlags(), daemonInspectFlags()...), fleetFlags()...)...), // listen.go, inspect.go, fleet.go
		Commands: []*cli.Command{daemonConnectCommand(std)}, // daemon_connect.go
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("zot daemon takes no arguments, got %q", cmd.Args().First())
			}
			if err := onlyFlags(cmd, "zot daemon", doorAllowed(append(append([]string{"ephemeral", "inspect-addr"}, listenFlagNames...), fleetFlagNames...)...)); err != nil {
				return err
			}
			return serveDaemon(ctx, cmd, std)
		},
	}
}

func acpCommand(std streams) *cli.Command {
	return &cli.Command{
		Name:            "acp",
		HideHelpCommand: true,
		Usage:           "serve the Agent Client Protocol (JSON-RPC 2.0) to one client on stdin/stdout, for editors that start their agent",
		Description: `Reads one JSON-RPC 2.0 message per line on stdin and writes one per line on
stdout; logs go to stderr. The methods are ACP v1's, as zot daemon serves
them. At the end of stdin zot finishes the requests under way, answers them
and exits 0.`,
		Flags: doorFlags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("zot acp takes no arguments, got %q", cmd.Args().First())
			}
			if err := onlyFlags(cmd, "zot acp", doorAllowed()); err != nil {
				return err
			}
			return serveACP(ctx, cmd, std)
		},
	}
}

// door is what both commands build from the flags: the host every
// session shares, the agent serving ACP, and the connections' options.
type door struct {
	host    *engine.Host
	agent   *acpserver.Agent
	rpc     jsonrpc.Options
	maxLine int // the longest line a client may send (--max-line-bytes)
	closed  sync.Once
	insp    *inspector    // --inspect's, or nil (inspect.go)
	fleet   *fleet.Remote // --executor temporal's, or nil (fleet.go)
}

func newDoor(cmd *cli.Command, std streams) (*door, error) {
	for _, n := range sessionlessFlags {
		if cmd.IsSet(n) {
			return nil, usagef("--%s does not apply to zot %s: each client's session/new gives the session its cwd", n, cmd.Name)
		}
	}
	limit := cmd.Int("max-line-bytes")
	if limit < 1024 {
		return nil, usagef("--max-line-bytes must be at least 1024")
	}
	stall := cmd.Duration("client-stall-timeout")
	if stall <= 0 {
		return nil, usagef("--client-stall-timeout must be positive, got %v", stall)
	}
	cfg, err := runtimeConfig(cmd, std.err)
	var missingKey *registry.MissingKeyError
	if errors.As(err, &missingKey) {
		// Without a key the door still serves: an editor lists sessions,
		// reads initialize's authMethods and gets auth_required for what
		// needs the model.
		fmt.Fprintf(std.err, "zot: %s (new sessions and prompts are answered auth_required until zot starts with a key)\n", missingKey)
		err = nil
	}
	if err != nil {
		return nil, err
	}
	h, err := zotHome(std.err)
	if err != nil {
		return nil, &exitError{code: 1, msg: err.Error()}
	}
	var insp *inspector // inspect.go
	if cmd.Name == "daemon" {
		insp, err = newInspector(cmd, cmd.Bool("inspect"), std.err) // served once the listeners are open
	} else {
		insp, err = startInspector(cmd, std.err)
	}
	if err != nil {
		return nil, err
	}
	var hostWith []func(*engine.HostConfig)
	if insp != nil {
		hostWith = append(hostWith, insp.host)
	}
	host, err := newHost(cfg, h, std.err, hostWith...) // flags.go
	if err != nil {
		if insp != nil {
			insp.close()
		}
		return nil, err
	}
	// The daemon's sessions ask the client by default (--permission ask).
	perm := "ask"
	switch {
	case cfg.Mode == engine.ModeAuto:
		perm = "allow"
	case cfg.LockMode:
		perm = "deny"
	}
	defaults := sessionOfHost(cfg)
	var remote *fleet.Remote
	if cmd.Name == "daemon" {
		if remote, err = startFleet(context.Background(), cmd, std.err); err != nil { // fleet.go
			host.Close()
			if insp != nil {
				insp.close()
			}
			return nil, err
		}
		if remote != nil {
			defaults.Executor = remote
		}
	}
	defaults.CWD = ""
	defaults.Log = std.err
	// Each session/new names its MCP servers; none are found in files.
	defaults.MCP = engine.MCPOptions{}
	agent, err := acpserver.New(acpserver.Options{
		Host:           host,
		Defaults:       defaults,
		Permission:     perm,
		SessionsDir:    h.Sessions(),
		Version:        buildVersion(),
		Log:            std.err,
		AuthMethods:    authMethods(cfg.Provider),
		MaxSessions:    cmd.Int("max-sessions"),         // zot daemon's (listen.go); 0 for zot acp
		ReconnectGrace: cmd.Duration("reconnect-grace"), // likewise
		Auth: func() error {
			if missingKey != nil {
				return missingKey
			}
			return nil
		},
	})
	if err != nil {
		host.Close()
		if insp != nil {
			insp.close()
		}
		if remote != nil {
			_ = remote.Close(time.Second)
		}
		return nil, &exitError{code: 1, msg: err.Error()}
	}
	d := &door{host: host, agent: agent, maxLine: limit, rpc: jsonrpc.Options{StallTimeout: stall, Log: std.err}, insp: insp, fleet: remote}
	if insp != nil {
		d.rpc.Tap = insp.tap.JSONRPC // every connection, on every transport
	}
	return d, nil
}

// authMethods are what initialize advertises for provider: for one
// that needs an API key, one method naming the variable that holds it;
// none for a provider without keys.
func authMethods(provider string) []acp.AuthMethod {
	p, ok := registry.Find(provider)
	if !ok || p.Keyless || len(p.KeyVars) == 0 {
		return nil
	}
	desc := fmt.Sprintf("Set %s in the environment the agent starts with (or start it with --api-key, or put the key in the auth file of the zot home), then restart the agent.", strings.Join(p.KeyVars, " or "))
	return []acp.AuthMethod{{Agent: &acp.AuthMethodAgent{
		ID:          acp.AuthMethodId(p.Name + "-api-key"),
		Name:        p.Name + " API key (" + p.KeyVars[0] + ")",
		Description: &desc,
		Meta:        map[string]any{"zot": map[string]any{"envVars": p.KeyVars}},
	}}}
}

// close ends every session (turns cancelled, their files closed, tool
// processes killed) within a bound. Only the first call does anything.
func (d *door) close(std streams) {
	d.closed.Do(func() { d.shutdown(std) })
}

func (d *door) shutdown(std streams) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.agent.Close(ctx); err != nil {
		fmt.Fprintln(std.err, "zot: ending the sessions:", err)
	}
	d.host.Close()
	if d.insp != nil {
		d.insp.close()
	}
	if d.fleet != nil {
		_ = d.fleet.Close(5 * time.Second) // its turns go on in the fleet
	}
}

// serveDaemon runs `zot daemon` until SIGTERM/SIGINT (exit 0 after a
// clean shutdown) or, with --ephemeral, until the last client is gone.
func serveDaemon(ctx context.Context, cmd *cli.Command, std streams) error {
	d, err := newDoor(cmd, std)
	if err != nil {
		return err
	}
	defer d.close(std)
	ls, err := openListeners(cmd, d.maxLine, std.err) // listen.go
	if err != nil {
		return err
	}
	defer ls.close()
	if d.insp != nil {
		if err := d.insp.mountDaemon(ls, cmd.String("inspect-addr")); err != nil {
			return err
		}
	}
	if len(ls.servers) > 0 {
		reload := func() { ls.reload(std.err) }
		onHangup.Store(&reload)
		defer onHangup.Store(nil)
	}
	err = daemon.Run(ctx, daemon.Options{
		Listeners:    ls.jsonrpc(),
		Ready:        func(string) { ls.setReady(true) },
		Ephemeral:    cmd.Bool("ephemeral"),
		Busy:         d.agent.Busy, // a turn whose client left ends before an ephemeral daemon does
		NewHandler:   d.agent.Handler,
		RPC:          d.rpc,
		MaxLineBytes: d.maxLine,
		Log:          std.err,
		// Turns end and their prompts answer "cancelled" while the
		// clients still listen.
		Stopping: func(context.Context) {
			ls.setReady(false)
			d.close(std)
		},
	})
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	return nil
}

// stdio is zot acp's stream: stdin and stdout. Close does not close
// them (a read of stdin or a write to stdout blocked in the kernel would
// not return anyway, and other parts of zot watch stdout): it tells
// serveACP that the connection is over, and the process's exit ends the
// rest.
type stdio struct {
	std    streams
	once   sync.Once
	closed chan struct{}
}

func (s *stdio) Read(p []byte) (int, error)  { return s.std.in.Read(p) }
func (s *stdio) Write(p []byte) (int, error) { return s.std.out.Write(p) }

// SyscallConn gives stdout's descriptor, through which the connection
// sees how much of what it wrote the client has read.
func (s *stdio) SyscallConn() (syscall.RawConn, error) { return s.std.out.SyscallConn() }

func (s *stdio) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

// serveACP runs `zot acp`: exit 0 at the end of stdin once the requests
// under way are answered, and when the client closes stdout; 128+signal
// on SIGTERM/SIGINT after ending the sessions.
func serveACP(ctx context.Context, cmd *cli.Command, std streams) error {
	d, err := newDoor(cmd, std)
	if err != nil {
		return err
	}
	defer d.close(std)
	s := &stdio{std: std, closed: make(chan struct{})}
	c := jsonrpc.NewConn(jsonrpc.NDJSON(s, d.maxLine), jsonrpc.Peer{Transport: "stdio", UID: os.Getuid(), PID: os.Getppid(), Label: "stdio"},
		d.agent.Handler, d.rpc)
	select {
	case <-c.Done():
	case <-s.closed:
		// The connection closed its stream: it ends at once, unless a
		// write to a client that stopped reading is stuck.
		select {
		case <-c.Done():
		case <-time.After(5 * time.Second):
			return &exitError{code: 1, msg: "the client stopped reading stdout"}
		}
	case <-ctx.Done():
		if received.Load() == int32(syscall.SIGPIPE) {
			// The editor closed its end of stdout: the connection is over
			// as at the end of stdin. That is a normal end: exit 0, quietly.
			d.close(std)
			_ = c.Close()
			return nil
		}
		// A signal: end the sessions, let their prompts' answers reach
		// stdout, then stop. The reader may stay blocked on stdin, which
		// the process's exit ends. A client that reads nothing holds
		// this up for daemon.StopStall at most.
		c.Hurry(daemon.StopStall)
		d.close(std)
		drain, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := c.Drain(drain); err != nil {
			fmt.Fprintln(std.err, "zot acp:", err)
		}
		cancel()
		_ = c.Close()
		return &exitError{code: 128 + signalNumber(ctx)}
	}
	if err := c.Err(); err != nil && !errors.Is(err, syscall.EPIPE) {
		return &exitError{code: 1, msg: err.Error()}
	}
	return nil
}

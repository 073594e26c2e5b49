//go:build !zotlean

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/acpdial"
	"zot.dev/zot/internal/acpserver"
	"zot.dev/zot/internal/atomicfile"
	"zot.dev/zot/internal/daemon"
	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/internal/registry"
	"zot.dev/zot/internal/settings"
	"zot.dev/zot/internal/store"
	"zot.dev/zot/internal/trust"
	"zot.dev/zot/internal/tui"
	"zot.dev/zot/internal/tui/editor"
	"zot.dev/zot/internal/tui/style"
)

// runTerminal opens the terminal client over an ACP server in this
// process.
func runTerminal(ctx context.Context, cmd *cli.Command, std streams) error {
	allowed := append(flagNames(agentFlags(), terminalFlags(), extFlags()), "inspect", "inspect-ring")
	if err := onlyFlags(cmd, "the terminal client", allowed); err != nil {
		return err
	}
	if cmd.IsSet("continue") && cmd.Bool("resume") {
		return usagef("--continue and --resume contradict each other")
	}
	if cmd.IsSet("session") && (cmd.Bool("continue") || cmd.Bool("resume")) {
		return usagef("--session contradicts --continue and --resume")
	}
	if cmd.Bool("no-session") {
		return usagef("--no-session does not apply to the terminal client: its sessions are kept in the session store (zot sessions)")
	}
	cfg, err := runtimeConfig(cmd, std.err)
	var missing *registry.MissingKeyError
	if errors.As(err, &missing) {
		return &exitError{code: 1, msg: firstRun(missing)}
	}
	if err != nil {
		return err
	}
	perm, err := terminalPermission(cmd, cfg)
	if err != nil {
		return err
	}
	cwd := cfg.CWD
	if cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return &exitError{code: 1, msg: err.Error()}
		}
	}
	if cwd, err = filepath.Abs(cwd); err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	var intro []string
	if !cmd.Bool("trust-project") {
		intro = askTrust(cwd, std)
	}
	h, err := zotHome(std.err)
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	// --inspect ADDR: the page shows the terminal's ACP messages (an
	// in-memory pipe) and its calls; its address is printed before the
	// screen is drawn (inspect.go).
	insp, err := startInspector(cmd, std.err)
	if err != nil {
		return err
	}
	var hostWith []func(*engine.HostConfig)
	var tapConn func(jsonrpc.Peer) (func(jsonrpc.Traffic), func())
	if insp != nil {
		defer insp.close()
		hostWith = append(hostWith, insp.host)
		tapConn = insp.tap.JSONRPC
	}
	host, err := newHost(cfg, h, std.err, hostWith...)
	if err != nil {
		return err
	}
	defaults := sessionOfHost(cfg)
	defaults.CWD, defaults.SessionFile = "", ""
	// The engine's diagnostics would draw over the screen: they go to
	// the terminal's log file.
	logFile, logPath := terminalLog(h.Logs())
	defer logFile.Close()
	defaults.Log = logFile
	agent, err := acpserver.New(acpserver.Options{
		Host: host, Defaults: defaults, Permission: perm, SessionsDir: h.Sessions(),
		Version: buildVersion(), Log: logFile,
	})
	if err != nil {
		host.Close()
		return &exitError{code: 1, msg: err.Error()}
	}
	defer func() {
		stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := agent.Close(stop); err != nil {
			fmt.Fprintln(std.err, "zot: ending the session:", err)
		}
		host.Close()
	}()
	server, client := jsonrpc.NewPipe()
	conn := jsonrpc.NewConn(server, jsonrpc.Peer{Transport: "memory", UID: os.Getuid(), PID: os.Getpid(), Label: "terminal"}, agent.Handler, jsonrpc.Options{Log: logFile, Tap: tapConn})
	defer func() { _ = conn.Close(); _ = conn.Wait() }()
	start := tui.Start{Continue: cmd.Bool("continue"), Resume: cmd.Bool("resume")}
	if cmd.IsSet("session") {
		if start.SessionID, err = terminalSession(ctx, cmd.String("session"), std); err != nil {
			return err
		}
	}
	// The mode chosen last time, unless a flag chooses one.
	mode := ""
	if last, err := settings.Recall(h.Dir); err == nil && !cmd.IsSet("permission") && !cmd.Bool("approve") && !cmd.Bool("yolo") && !cmd.Bool("no-yolo") {
		mode = last.Mode
	}
	err = tui.Run(ctx, tui.Options{
		Transport:   client,
		CWD:         cwd,
		Prompt:      strings.Join(cmd.Args().Slice(), " "),
		Start:       start,
		Version:     buildVersion(),
		Theme:       style.FromEnv(os.Getenv),
		Input:       std.in,
		Output:      std.out,
		HistoryFile: editor.HistoryPath(h.Dir, cwd),
		Settings:    remembered{home: h.Dir, provider: cfg.Provider},
		Mode:        mode,
		Intro:       intro,
	})
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("%v (the log: %s)", err, logPath)}
	}
	return nil
}

// attach runs the terminal client over the daemon's socket.
func attach(ctx context.Context, cmd *cli.Command, std streams) error {
	transport, err := attachTransport(ctx, cmd)
	if err != nil {
		return err
	}
	cwd := cmd.String("cwd")
	if cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return &exitError{code: 1, msg: err.Error()}
		}
	}
	if cwd, err = filepath.Abs(cwd); err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	start := tui.Start{Continue: cmd.Bool("continue"), SessionID: cmd.String("session")}
	if !start.Continue && start.SessionID == "" {
		start.Resume = true
	}
	history := ""
	var kept tui.SessionSettings
	if h, err := zotHome(std.err); err == nil {
		history = editor.HistoryPath(h.Dir, cwd)
		kept = &attachedSessions{file: filepath.Join(h.Dir, "attached.json")}
	}
	err = tui.Run(ctx, tui.Options{
		Transport:   transport,
		CWD:         cwd,
		Start:       start,
		Attach:      true,
		Version:     buildVersion(),
		Theme:       style.FromEnv(os.Getenv),
		Input:       std.in,
		Output:      std.out,
		HistoryFile: history,
		Sessions:    kept,
	})
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	return nil
}

// attachTransport connects zot attach to its daemon: the socket named
// (or found), or the WebSocket endpoint of a ws:// or wss:// URL, which
// is dialed again when the connection drops.
func attachTransport(ctx context.Context, cmd *cli.Command) (jsonrpc.Transport, error) {
	path := cmd.Args().First()
	if acpdial.IsURL(path) {
		token, err := acpdial.Token(cmd.String("token"), cmd.String("token-file"))
		if err != nil {
			return nil, usagef("%v", err)
		}
		t, err := acpdial.NewRedial(ctx, func(ctx context.Context) (jsonrpc.Transport, error) {
			return acpdial.Dial(ctx, path, acpdial.Options{Token: token})
		}, acpdial.RedialOptions{})
		if err != nil {
			return nil, &exitError{code: 1, msg: "zot attach: " + err.Error()}
		}
		return t, nil
	}
	if cmd.IsSet("token") || cmd.IsSet("token-file") {
		return nil, usagef("--token and --token-file apply to a ws:// or wss:// URL, not to a socket")
	}
	if path == "" {
		sock, err := daemon.ResolveSocket(nil)
		if err != nil {
			return nil, &exitError{code: 1, msg: err.Error()}
		}
		path = sock.Path
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("no zot daemon answers at %s: start one with zot daemon (or name its socket): %v", path, err)}
	}
	conn := c.(*net.UnixConn)
	if uid, err := daemon.PeerUID(conn); err != nil || (uid >= 0 && uid != os.Getuid()) {
		conn.Close()
		return nil, &exitError{code: 1, msg: fmt.Sprintf("zot attach: %s is not served by a process of this user: attach talks only to your own daemon", path)}
	}
	return jsonrpc.NDJSON(conn, 64<<20), nil
}

// remembered keeps the model and mode the person chose in the zot home's
// config.json, for the next run (settings.Remember).
type remembered struct{ home, provider string }

func (r remembered) Remember(model, mode string) error {
	last := settings.Last{Mode: mode}
	if model != "" {
		last.Provider, last.Model = r.provider, model
	}
	return settings.Remember(r.home, last)
}

// attachedSessions keeps the model and mode of each daemon session zot
// attach had open, in the zot home's attached.json: a daemon's session
// loaded again comes back in the daemon's own model and mode, and the
// client puts it back in the ones it had.
type attachedSessions struct {
	file string
	mu   sync.Mutex
}

// attachedEntry is one session's record.
type attachedEntry struct {
	Model string    `json:"model,omitempty"`
	Mode  string    `json:"mode,omitempty"`
	Seen  time.Time `json:"seen"`
}

// maxAttached bounds the sessions attached.json remembers (the ones
// seen last).
const maxAttached = 256

func (a *attachedSessions) read() map[string]attachedEntry {
	var f struct {
		Sessions map[string]attachedEntry `json:"sessions"`
	}
	if data, err := os.ReadFile(a.file); err == nil {
		_ = json.Unmarshal(data, &f) // a file that does not decode remembers nothing
	}
	if f.Sessions == nil {
		f.Sessions = map[string]attachedEntry{}
	}
	return f.Sessions
}

// Recall returns the model and mode the session had when last seen.
func (a *attachedSessions) Recall(id string) (model, mode string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.read()[id]
	return e.Model, e.Mode
}

// Keep records the session's model and mode. The file's lock (its name
// with ".lock") is held from the read to the write, so that two zot
// attach keeping theirs at once both keep them.
func (a *attachedSessions) Keep(id, model, mode string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	unlock, err := store.LockFile(ctx, a.file+".lock")
	cancel()
	if err != nil {
		return fmt.Errorf("keeping the session's model and mode: locking %s: %w", a.file, err)
	}
	defer unlock()
	all := a.read()
	all[id] = attachedEntry{Model: model, Mode: mode, Seen: time.Now().UTC()}
	for len(all) > maxAttached {
		oldest := ""
		for k, e := range all {
			if oldest == "" || e.Seen.Before(all[oldest].Seen) {
				oldest = k
			}
		}
		delete(all, oldest)
	}
	data, err := json.MarshalIndent(map[string]any{"sessions": all}, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(a.file, append(data, '\n')); err != nil {
		return fmt.Errorf("keeping the session's model and mode: %w", err)
	}
	return nil
}

// terminalSession is the stored session --session names: its id, or a
// file of the store. The terminal opens sessions through the agent,
// which knows them by id: a file elsewhere is imported first.
func terminalSession(ctx context.Context, arg string, std streams) (string, error) {
	s, err := openStore(ctx, std.err) // sessions.go
	if err != nil {
		return "", err
	}
	if store.ValidID(arg) && s.Has(arg) {
		return arg, nil
	}
	if abs, err := filepath.Abs(arg); err == nil {
		if id, ok := s.IDOf(abs); ok && s.Has(id) {
			return id, nil
		}
	}
	return "", usagef("--session %s: no stored session has that id or file (zot sessions list shows them; zot sessions import FILE stores a file)", arg)
}

// terminalLog opens the file the terminal's diagnostics go to:
// terminal.log in the zot home's logs, else nowhere.
func terminalLog(dir string) (*os.File, string) {
	path := filepath.Join(dir, "terminal.log")
	if err := os.MkdirAll(dir, 0o700); err == nil {
		if f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
			return f, path
		}
	}
	f, _ := os.Open(os.DevNull)
	return f, os.DevNull
}

// firstRun is what the terminal says when the provider has no key.
func firstRun(missing *registry.MissingKeyError) string {
	vars := "its API key"
	if p, ok := registry.Find(missing.Provider); ok && len(p.KeyVars) > 0 {
		vars = strings.Join(p.KeyVars, " or ")
	}
	return fmt.Sprintf(`no API key for %s yet.
  Set %s (export %s=...) or pass --api-key;
  another provider: --provider (zot models lists them);
  no key at all: zot --provider scripted`, missing.Provider, vars, firstVar(vars))
}

func firstVar(vars string) string {
	v, _, _ := strings.Cut(vars, " or ")
	if v == "its API key" {
		return "KEY"
	}
	return v
}

// askTrust asks, once for a folder whose own extensions or MCP servers
// are not trusted yet, whether to trust it; yes records it in the trust
// store (zot untrust forgets it), no records the decline, so that the
// folder is not asked about again until zot trust or zot untrust. A
// folder declined before is not asked about: the lines returned say its
// own extensions are off, on the client's screen.
func askTrust(cwd string, std streams) []string {
	h, err := zotHome(std.err)
	if err != nil {
		return nil
	}
	store := &trust.Store{File: h.TrustFile()}
	d := (&trust.Gate{Store: store}).Check(cwd)
	if d.Allowed || d.Err != nil || d.Project.Foreign != "" {
		return nil
	}
	var what []string
	if len(d.Project.Extensions) > 0 {
		what = append(what, "extensions ("+strings.Join(d.Project.Extensions, ", ")+")")
	}
	if d.Project.MCP {
		what = append(what, "MCP servers (.zot/mcp.json)")
	}
	if _, declined, _ := store.LookupDeclined(d.Project.Dir); declined {
		return []string{fmt.Sprintf("This folder's own %s stay off: you declined them.", strings.Join(what, " and ")),
			"(zot trust runs them, zot untrust asks again)", ""}
	}
	why := "has"
	if d.Changed {
		why = "changed its"
	}
	fmt.Fprintf(std.out, "%s %s its own %s, which run as you.\nTrust this folder and run them? [y/N] ", d.Project.Dir, why, strings.Join(what, " and "))
	line, eof := readLine(std.in)
	if a := strings.ToLower(strings.TrimSpace(line)); a == "y" || a == "yes" {
		if _, err := store.Trust(d.Project); err != nil {
			fmt.Fprintln(std.out, "zot: could not record the trust:", err)
		}
		return nil
	}
	if eof && strings.TrimSpace(line) == "" {
		// No answer (Ctrl-D): off this time, asked again the next.
		fmt.Fprintln(std.out, "\nNot trusted this time: they stay off, and zot asks again the next time.")
		return nil
	}
	if _, err := store.Decline(d.Project); err != nil {
		fmt.Fprintln(std.out, "zot: could not record the answer:", err)
	}
	fmt.Fprintln(std.out, "Not trusted: they stay off, and zot will not ask again in this folder.\n(zot trust runs them, zot untrust asks again)")
	return nil
}

// readLine reads one line from r a byte at a time, so that nothing typed
// after it is taken from what reads r next; eof reports that r ended
// before a newline.
func readLine(r io.Reader) (line string, eof bool) {
	var b strings.Builder
	var c [1]byte
	for {
		n, err := r.Read(c[:])
		if n == 1 {
			if c[0] == '\n' {
				return b.String(), false
			}
			b.WriteByte(c[0])
		}
		if err != nil {
			return b.String(), true
		}
	}
}

// terminalPermission is the permission policy of the terminal's
// sessions: ask unless the flags say otherwise.
func terminalPermission(cmd *cli.Command, cfg agentConfig) (string, error) {
	yolo, noYolo := cmd.Bool("yolo"), cmd.Bool("no-yolo")
	if yolo && noYolo {
		return "", usagef("--yolo and --no-yolo contradict each other")
	}
	perm := acpserver.PermissionAsk
	if cmd.IsSet("permission") || cmd.Bool("approve") {
		switch {
		case cfg.LockMode:
			perm = acpserver.PermissionDeny
		case cfg.Mode == engine.ModeAuto:
			perm = acpserver.PermissionAllow
		}
		if (yolo && perm != acpserver.PermissionAllow) || (noYolo && perm != acpserver.PermissionAsk) {
			return "", usagef("--yolo and --no-yolo mean --permission allow and ask; they contradict --permission %s", cmd.String("permission"))
		}
	}
	if yolo {
		perm = acpserver.PermissionAllow
	}
	return perm, nil
}

package exthost

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pidOf returns the process id of the named extension.
func pidOf(t testing.TB, h *Manager, name string) int {
	t.Helper()
	e := h.byName(name)
	if e == nil {
		t.Fatalf("no extension %s", name)
	}
	<-e.startedCh
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.proc == nil {
		t.Fatalf("extension %s did not start", name)
	}
	return e.proc.Pid()
}

// An extension that never says hello is killed once the handshake
// timeout passes; the first prompt waits no longer than that, and the
// others still load.
func TestHandshakeTimeoutKills(t *testing.T) {
	dir := t.TempDir()
	sess := newFakeSession(t)
	// py has a start timeout of its own, long enough for a Python start
	// on a loaded machine: only mute is meant to miss its deadline.
	cfg, _, log := testConfig(t, pyExt(t, dir, "mute", "silent"), pyExt(t, dir, "py", "ok", "start_timeout_ms", 30000))
	cfg.StartTimeout = 1500 * time.Millisecond
	h := start(t, sess, cfg)
	pid := pidOf(t, h, "mute")
	began := time.Now()
	h.WaitReady(context.Background())
	if waited := time.Since(began); waited > 8*time.Second {
		t.Fatalf("the first prompt would wait %s", waited)
	}
	waitGone(t, pid, 3*time.Second)
	if !strings.Contains(log.String(), "extension mute: not loaded: no hello within 1.5s; killed") {
		t.Fatalf("log: %s", log.String())
	}
	if i := h.Extensions(); i[0].State != "failed" || i[1].State != "ready" {
		t.Fatalf("states: %+v", i)
	}
	runTool(t, sess, "py_echo", `{"text":"x"}`)
	logFile, _ := os.ReadFile(filepath.Join(cfg.LogDir, "ext-mute.log"))
	if !strings.Contains(string(logFile), "[zot] not loaded: no hello") {
		t.Fatalf("extension log: %s", logFile)
	}
}

// A hello that names another extension fails the handshake.
func TestHelloMustNameTheManifest(t *testing.T) {
	dir := t.TempDir()
	folder := manifest(t, dir, "alias", map[string]any{"exec": "python3", "args": []string{testdata(t, "py/ext.py"), "wrongname", "other"}})
	sess := newFakeSession(t)
	cfg, _, log := testConfig(t, folder)
	h := start(t, sess, cfg)
	pid := pidOf(t, h, "alias")
	h.WaitReady(context.Background())
	waitGone(t, pid, 2*time.Second)
	if !strings.Contains(log.String(), `hello names "other", the manifest "alias"`) {
		t.Fatalf("log: %s", log.String())
	}
}

// An extension that sends no ready is taken as ready: after the ready
// timeout when it keeps talking, after a short quiet spell when it does
// not.
func TestReadyTimeout(t *testing.T) {
	dir := t.TempDir()
	sess := newFakeSession(t)
	cfg, _, _ := testConfig(t, pyExt(t, dir, "chat", "chatty"), pyExt(t, dir, "calm", "quiet"))
	cfg.ReadyTimeout = 800 * time.Millisecond
	began := time.Now()
	h := start(t, sess, cfg)
	calm := h.byName("calm")
	chat := h.byName("chat")
	<-calm.readyCh
	calmAt := time.Since(began)
	<-chat.readyCh
	chatAt := time.Since(began)
	if chatAt < 800*time.Millisecond || chatAt > 8*time.Second { // the upper bound leaves room for a loaded machine
		t.Fatalf("the chatty one was ready after %s", chatAt)
	}
	if calmAt >= chatAt {
		t.Fatalf("the quiet one was ready after %s, not before the chatty one (%s)", calmAt, chatAt)
	}
	for _, name := range []string{"chat_echo", "calm_echo"} {
		if r := runTool(t, sess, name, `{"text":"ok"}`); text(r) != "echo: ok" {
			t.Fatalf("%s: %q", name, text(r))
		}
	}
}

// An extension whose hello promised ready (sends_ready) is not taken as
// ready for being quiet: it is waited for until its start timeout,
// counted from its start, and then goes on with what it registered.
func TestPromisedReadyWaitsForTheStartTimeout(t *testing.T) {
	dir := t.TempDir()
	sess := newFakeSession(t)
	// prom's own start timeout (longer than the host's) leaves a Python
	// start on a loaded machine time to say hello before it runs out.
	cfg, _, _ := testConfig(t, pyExt(t, dir, "prom", "promised", "start_timeout_ms", 4000), pyExt(t, dir, "calm", "quiet"))
	cfg.StartTimeout = 1500 * time.Millisecond
	cfg.ReadyTimeout = 300 * time.Millisecond
	began := time.Now()
	h := start(t, sess, cfg)
	<-h.byName("calm").readyCh
	calmAt := time.Since(began)
	<-h.byName("prom").readyCh
	promAt := time.Since(began)
	if promAt < 3900*time.Millisecond || promAt > 12*time.Second {
		t.Fatalf("the promising one was ready after %s", promAt)
	}
	if calmAt >= promAt {
		t.Fatalf("the quiet one, which promised nothing, was ready after %s, not before the promising one (%s)", calmAt, promAt)
	}
	if r := runTool(t, sess, "prom_echo", `{"text":"ok"}`); text(r) != "echo: ok" {
		t.Fatalf("prom_echo: %q", text(r))
	}
}

// A tool that does not answer in time fails with a clear error, and the
// extension is told to stop with a cancel frame.
func TestToolTimeoutCancels(t *testing.T) {
	dir := t.TempDir()
	sess := newFakeSession(t)
	cfg, got, _ := testConfig(t, pyExt(t, dir, "py", "ok"))
	h := start(t, sess, cfg)
	h.WaitReady(context.Background())
	began := time.Now()
	r := runTool(t, sess, "py_slow", `{}`)
	if !r.IsError || !strings.Contains(text(r), "gave no result for py_slow within 300ms") {
		t.Fatalf("result: %q error=%v", text(r), r.IsError)
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Fatalf("the timeout took %s", d)
	}
	got.waitMessage(t, "cancel 1 timeout")

	// An abort cancels too.
	tool, _ := sess.Tools().View().Lookup("py_slow")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	r, _ = tool.Run(ctx, toolCall(`{}`))
	if text(r) != "aborted" {
		t.Fatalf("aborted call: %q", text(r))
	}
	got.waitMessage(t, "cancel 2 aborted")
}

// A crash in the middle of a call fails it at once, is reported, and
// takes the extension's tools away; the others carry on.
func TestCrashMidCall(t *testing.T) {
	for _, c := range []struct{ lang, status string }{{"python", "status 3"}, {"node", "status 4"}, {"go", "status 5"}} {
		t.Run(c.lang, func(t *testing.T) {
			dir := t.TempDir()
			sess := newFakeSession(t)
			folder := langExt(t, c.lang, dir, "boom", "crash_on_tool")
			cfg, got, log := testConfig(t, folder, goExt(t, dir, "gx"))
			cfg.ToolTimeout = 30 * time.Second
			h := start(t, sess, cfg)
			h.WaitReady(context.Background())
			began := time.Now()
			r := runTool(t, sess, "boom_echo", `{"text":"x"}`)
			if !r.IsError || !strings.Contains(text(r), c.status) {
				t.Fatalf("result: %q", text(r))
			}
			if d := time.Since(began); d > 5*time.Second {
				t.Fatalf("the crash was noticed after %s", d)
			}
			n := got.wait(t, "crash notice", func(n Notice) bool { return n.Level == "error" && n.Extension == "boom" })
			if !strings.Contains(n.Message, c.status) {
				t.Fatalf("notice: %+v", n)
			}
			if _, ok := sess.Tools().View().Lookup("boom_echo"); ok {
				t.Fatal("the crashed extension's tool is still offered")
			}
			if !strings.Contains(log.String(), "extension boom: exited with "+c.status) {
				t.Fatalf("log: %s", log.String())
			}
			if r := runTool(t, sess, "gx_echo", `{"text":"still"}`); text(r) != "echo: still" {
				t.Fatalf("the other extension: %q", text(r))
			}
			if i := h.Extensions(); i[0].State != "exited" {
				t.Fatalf("state: %+v", i[0])
			}
		})
	}
}

// Lines that are not JSON, over the size limit, of an unknown type, or
// answers to nothing are logged and skipped; the extension works on.
func TestGarbageFrames(t *testing.T) {
	dir := t.TempDir()
	sess := newFakeSession(t)
	cfg, _, log := testConfig(t, pyExt(t, dir, "junk", "garbage"))
	cfg.MaxFrameBytes = 1024
	h := start(t, sess, cfg)
	h.WaitReady(context.Background())
	if r := runTool(t, sess, "junk_echo", `{"text":"fine"}`); text(r) != "echo: fine" {
		t.Fatalf("result: %q", text(r))
	}
	for _, want := range []string{"skipped a frame over 1024 bytes", `skipped a frame: `, "teleport"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q: %s", want, log.String())
		}
	}
	logFile, _ := os.ReadFile(filepath.Join(cfg.LogDir, "ext-junk.log"))
	if !strings.Contains(string(logFile), `dropped a tool_result for request "999"`) {
		t.Errorf("extension log: %s", logFile)
	}
}

// After Close nothing the extensions started is left: not one that
// ignores shutdown and SIGTERM, not a child in its process group.
func TestNoProcessLeft(t *testing.T) {
	dir := t.TempDir()
	sess := newFakeSession(t)
	cfg, got, _ := testConfig(t, pyExt(t, dir, "kids", "group"), pyExt(t, dir, "mule", "stubborn"))
	cfg.ShutdownGrace = 300 * time.Millisecond
	cfg.TermGrace = 300 * time.Millisecond
	h := Start(sess, cfg)
	h.WaitReady(context.Background())
	var parent, child int
	n := got.waitMessage(t, "pids ")
	fmt.Sscanf(n.Message, "pids %d %d", &parent, &child)
	mule := pidOf(t, h, "mule")
	began := time.Now()
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(began); d > 3*time.Second {
		t.Fatalf("Close took %s", d)
	}
	for _, pid := range []int{parent, child, mule} {
		if alive(pid) {
			t.Errorf("process %d outlived Close", pid)
		}
	}
	if len(sess.tools.View().Tools()) != 1 {
		t.Fatalf("tools left: %s", sess.tools.View().Names())
	}
}

// A missing program is reported and the rest load.
func TestMissingProgram(t *testing.T) {
	dir := t.TempDir()
	folder := manifest(t, dir, "ghost", map[string]any{"exec": "./no-such-program"})
	sess := newFakeSession(t)
	cfg, _, log := testConfig(t, folder, pyExt(t, dir, "py", "ok"))
	h := start(t, sess, cfg)
	h.WaitReady(context.Background())
	if !strings.Contains(log.String(), "extension ghost: not loaded: starting") {
		t.Fatalf("log: %s", log.String())
	}
	runTool(t, sess, "py_echo", `{}`)
}

// Stopping climbs the ladder only as far as each extension needs: one
// that answers shutdown exits without a signal (Python, Node and Go
// alike), one deaf to shutdown and to its stdin's end is sent SIGTERM
// once the grace is over, and one that ignores SIGTERM too is killed.
func TestShutdownLadder(t *testing.T) {
	dir := t.TempDir()
	sess := newFakeSession(t)
	cfg, got, _ := testConfig(t,
		pyExt(t, dir, "py", "ok"), nodeExt(t, dir, "node", "ok"), goExt(t, dir, "gx"),
		pyExt(t, dir, "deaf", "deaf"), pyExt(t, dir, "mule", "stubborn"),
		nodeExt(t, dir, "nodemule", "stubborn"), goExtMode(t, dir, "gomule", "stubborn"))
	cfg.ShutdownGrace = 500 * time.Millisecond
	cfg.TermGrace = 500 * time.Millisecond
	h := Start(sess, cfg)
	h.WaitReady(context.Background())
	var pids []int
	for _, name := range []string{"py", "node", "gx", "deaf", "mule", "nodemule", "gomule"} {
		pids = append(pids, pidOf(t, h, name))
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d outlived Close", pid)
		}
	}
	got.waitMessage(t, "shutdown ignored")
	for name, want := range map[string]string{"py": "", "node": "", "gx": "", "deaf": "terminated", "mule": "killed", "nodemule": "killed", "gomule": "killed"} {
		logFile, err := os.ReadFile(filepath.Join(cfg.LogDir, "ext-"+name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		log := string(logFile)
		switch {
		case want == "" && (strings.Contains(log, "had to be") || !strings.Contains(log, "shutdown acknowledged")):
			t.Errorf("%s did not stop by shutdown alone: %s", name, log)
		case want != "" && !strings.Contains(log, "shutdown: it had to be "+want):
			t.Errorf("%s was not %s: %s", name, want, log)
		}
	}
}

// Stopping extensions that answer shutdown waits for their exit, not for
// the grace: Close returns long before a grace of a minute is over.
func TestShutdownWaitsForTheExitNotTheGrace(t *testing.T) {
	dir := t.TempDir()
	sess := newFakeSession(t)
	cfg, _, _ := testConfig(t, pyExt(t, dir, "py", "ok"), nodeExt(t, dir, "node", "ok"), goExt(t, dir, "gx"))
	cfg.ShutdownGrace = time.Minute
	cfg.TermGrace = time.Minute
	h := Start(sess, cfg)
	h.WaitReady(context.Background())
	began := time.Now()
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(began); d > 30*time.Second {
		t.Fatalf("Close waited %s for extensions that had exited", d)
	}
}

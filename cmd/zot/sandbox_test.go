package main

// The sandbox through the real binary (docs/sandbox.md): bash's commands
// and the file tools under workspace-write and read-only, with the
// network off, in zot rpc and over ACP, as zot's user and, when the tests
// run as root, as nobody too (the kernel holds both).

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"zot.dev/zot/internal/provider/providertest"
	"zot.dev/zot/internal/sandbox"
	"zot.dev/zot/sdk/wire"
)

// sandboxUser is a user the sandbox tests run zot as.
type sandboxUser struct {
	name string
	cred *syscall.Credential // nil: the test's own user
}

// sandboxUsers are the test's own user and, as root, nobody.
func sandboxUsers(t *testing.T) []sandboxUser {
	users := []sandboxUser{{name: "self"}}
	if os.Getuid() == 0 {
		users = append(users, sandboxUser{name: "nobody", cred: &syscall.Credential{Uid: 65534, Gid: 65534}})
	} else {
		t.Log("not root: the half of these tests that runs zot as nobody is skipped")
	}
	return users
}

// needSandbox skips where this kernel enforces nothing.
func needSandbox(t *testing.T) {
	t.Helper()
	if sandbox.Probe().Backend != sandbox.BackendLandlock {
		t.Skipf("no Landlock here (%s)", sandbox.Probe())
	}
}

// openDir makes a folder everybody may write, so that what stops a write
// is the sandbox and not the file's owner.
func openDir(t *testing.T, parts ...string) string {
	t.Helper()
	dir := filepath.Join(parts...)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// sharedBase is a folder every user may enter, with a copy of zot every
// user may run.
func sharedBase(t *testing.T) (base, bin string) {
	t.Helper()
	base, err := os.MkdirTemp("", "zot-sbx-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o777)
	base, _ = filepath.EvalSymlinks(base)
	bin = filepath.Join(base, "zot")
	src, err := os.Open(zotBin)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	dst.Close()
	return base, bin
}

// loopback is a TCP listener on 127.0.0.1 that accepts and closes; it
// returns the port.
func loopback(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// sandboxCase is one tool call and whether the sandbox must refuse it.
type sandboxCase struct {
	what    string
	tool    string
	args    map[string]any
	refused bool
	want    string // text the result holds
}

// workspaceCases are the calls of the workspace-write test: ws is the
// workspace (with link, a symbolic link to out), out a folder outside
// it everybody may write, port a loopback listener.
func workspaceCases(ws, out string, port int) []sandboxCase {
	py := func(code string) map[string]any { return map[string]any{"command": "python3 -c '" + code + "'"} }
	cases := []sandboxCase{
		{what: "a write inside", tool: "bash", args: map[string]any{"command": "echo in > inside.txt && cat inside.txt"}, want: "in"},
		{what: "the temp dir", tool: "bash", args: map[string]any{"command": "f=$(mktemp) && echo t > $f && rm $f && echo tmp-ok"}, want: "tmp-ok"},
		{what: "/tmp/../etc", tool: "bash", args: map[string]any{"command": "echo x > /tmp/../etc/zot-sandbox-probe"}, refused: true, want: "sandbox (workspace-write, network off)"},
		{what: "a planted link", tool: "bash", args: map[string]any{"command": "echo x > link/by-link"}, refused: true},
		{what: "cd / && touch", tool: "bash", args: map[string]any{"command": "cd / && touch zot-sandbox-probe"}, refused: true},
		{what: "cd out && touch", tool: "bash", args: map[string]any{"command": "cd " + out + " && touch by-cd"}, refused: true},
		{what: "a Python child", tool: "bash", args: py(`open("` + out + `/by-python", "w").write("x")`), refused: true},
		{what: "a TCP socket", tool: "bash", args: py(`import socket; socket.create_connection(("127.0.0.1", ` + strconv.Itoa(port) + `)); print("connected")`), refused: true},
		{what: "a UDP socket", tool: "bash", args: py(`import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", 9))`), refused: true},
		{what: "write through the link", tool: "write", args: map[string]any{"path": "link/by-write", "content": "x"}, refused: true, want: "sandbox (workspace-write)"},
		{what: "write outside", tool: "write", args: map[string]any{"path": out + "/by-write2", "content": "x"}, refused: true, want: "/unjail"},
		{what: "write inside", tool: "write", args: map[string]any{"path": "written.txt", "content": "x"}},
	}
	if _, err := exec.LookPath("curl"); err == nil {
		cases = append(cases, sandboxCase{what: "curl", tool: "bash", args: map[string]any{"command": "curl -sS -m 5 http://127.0.0.1:" + strconv.Itoa(port) + "/"}, refused: true})
	}
	return cases
}

// readOnlyCases are the calls of the read-only test in ws, which holds
// kept.txt.
func readOnlyCases() []sandboxCase {
	var cases []sandboxCase
	for _, c := range []string{"echo x > new.txt", "echo x >> kept.txt", ": > kept.txt", "rm kept.txt", "mkdir d", "ln -s kept.txt l", "mv kept.txt moved.txt", "touch $(mktemp -u)", "mkfifo p", "python3 -c 'open(\"kept.txt\", \"w\")'"} {
		cases = append(cases, sandboxCase{what: c, tool: "bash", args: map[string]any{"command": c}, refused: true})
	}
	cases = append(cases,
		sandboxCase{what: "cat", tool: "bash", args: map[string]any{"command": "cat kept.txt"}, want: "kept"},
		sandboxCase{what: "write", tool: "write", args: map[string]any{"path": "kept.txt", "content": "x"}, refused: true, want: "read-only"},
		sandboxCase{what: "edit", tool: "edit", args: map[string]any{"path": "kept.txt", "edits": []any{map[string]any{"oldText": "kept", "newText": "gone"}}}, refused: true, want: "read-only"},
	)
	return cases
}

// scriptOf is a script in dir, of one turn calling each case's tool in
// order.
func scriptOf(t *testing.T, dir string, cases []sandboxCase) string {
	var steps []map[string]any
	for i, c := range cases {
		steps = append(steps, map[string]any{"tool_calls": []any{map[string]any{"id": "c" + strconv.Itoa(i), "name": c.tool, "args": c.args}}})
	}
	data, err := json.Marshal(map[string]any{"turns": []any{turnOf(steps...)}})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "script.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// userEnv is the environment of zot run for one user under base: its
// own zot home and temp dir (so that the folder "outside" is not in the
// temp dir, which the sandbox lets commands write).
func userEnv(t *testing.T, base, user string) []string {
	return []string{"ZOT_HOME=" + openDir(t, base, user, "home"), "TMPDIR=" + openDir(t, base, user, "tmp")}
}

// checkResults compares each call's result (by call id) with its case.
func checkResults(t *testing.T, cases []sandboxCase, results map[string]result) {
	t.Helper()
	for i, c := range cases {
		r, ok := results["c"+strconv.Itoa(i)]
		if !ok {
			t.Errorf("%s: no result", c.what)
			continue
		}
		if r.isError != c.refused {
			t.Errorf("%s: is_error %v, want %v: %s", c.what, r.isError, c.refused, r.text)
		}
		if c.want != "" && !strings.Contains(r.text, c.want) {
			t.Errorf("%s: the result does not say %q: %s", c.what, c.want, r.text)
		}
	}
}

// result is a tool call's outcome as a door reported it.
type result struct {
	isError bool
	text    string
}

// startRPCAs runs zot rpc (bin) as cred with args and env.
func startRPCAs(t *testing.T, bin string, cred *syscall.Credential, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"rpc"}, args...)...)
	cmd.Env = append(cleanEnv(), env...)
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	stdin, stdout, stderr := startPiped(t, cmd)
	p := &proc{t: t, cmd: cmd, stdin: stdin, frames: make(chan frameIn, 4096), stderr: stderr, done: make(chan struct{})}
	go p.readLoop(stdout)
	return p
}

// rpcResults runs one prompt and returns its tool results by call id.
func rpcResults(t *testing.T, p *proc) map[string]result {
	t.Helper()
	out := map[string]result{}
	for _, ev := range promptDone(t, p, "p", "go") {
		if r, ok := ev.(*wire.ToolResultEvent); ok {
			var text strings.Builder
			for _, b := range r.Content {
				if tb, ok := b.(*wire.TextBlock); ok {
					text.WriteString(tb.Text)
				}
			}
			out[r.ID] = result{isError: r.IsError, text: text.String()}
		}
	}
	return out
}

// rpcSandboxState asks get_state for the sandbox.
func rpcSandboxState(t *testing.T, p *proc) wire.SandboxState {
	t.Helper()
	p.send(`{"id":"st","type":"get_state"}`)
	resp, _ := p.response()
	var st wire.StateResult
	if err := json.Unmarshal(resp.Data, &st); err != nil || st.Sandbox == nil {
		t.Fatalf("get_state: %s (%v)", resp.Data, err)
	}
	return *st.Sandbox
}

// TestSandboxWorkspaceWriteRPC: zot rpc in auto mode (its default) runs
// bash under workspace-write with the network off: writes outside the
// workspace fail in the kernel whichever way they are made, sockets fail,
// writes inside and in the temp dir work, the file tools refuse the same
// paths with an error that names them and how to allow them; get_state
// says so; /unjail lifts it and /jail puts it back.
func TestSandboxWorkspaceWriteRPC(t *testing.T) {
	needSandbox(t)
	base, bin := sharedBase(t)
	port := loopback(t)
	for _, u := range sandboxUsers(t) {
		t.Run(u.name, func(t *testing.T) {
			ws, out := openDir(t, base, u.name, "ws"), openDir(t, base, u.name, "out")
			if err := os.Symlink(out, filepath.Join(ws, "link")); err != nil {
				t.Fatal(err)
			}
			cases := workspaceCases(ws, out, port)
			p := startRPCAs(t, bin, u.cred, userEnv(t, base, u.name), "--provider", "scripted", "--script", scriptOf(t, filepath.Join(base, u.name), cases), "--cwd", ws)
			st := rpcSandboxState(t, p)
			if st.Mode != wire.SandboxModeWorkspaceWrite || st.Network || st.EnforcedBy != "landlock" || len(st.Writable) < 2 || st.Writable[0] != ws {
				t.Errorf("get_state's sandbox: %+v", st)
			}
			checkResults(t, cases, rpcResults(t, p))
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Errorf("written outside the workspace: %v", entries)
			}
			for _, f := range []string{"/etc/zot-sandbox-probe", "/zot-sandbox-probe"} {
				if _, err := os.Stat(f); err == nil {
					os.Remove(f)
					t.Errorf("%s was written", f)
				}
			}

			p.send(`{"id":"u","type":"run_command","name":"unjail"}`)
			resp, _ := p.response()
			if !resp.Success || !strings.Contains(string(resp.Data), "Sandbox: full, network on") {
				t.Errorf("/unjail: %s %s", resp.Data, resp.Error)
			}
			if st := rpcSandboxState(t, p); st.Mode != wire.SandboxModeFull || !st.Network || st.EnforcedBy != "none" {
				t.Errorf("after /unjail: %+v", st)
			}
			p.send(`{"id":"j","type":"run_command","name":"jail","args":"read-only"}`)
			resp, _ = p.response()
			if st := rpcSandboxState(t, p); !resp.Success || st.Mode != wire.SandboxModeReadOnly || st.Network {
				t.Errorf("after /jail read-only: %s %+v", resp.Data, st)
			}
		})
	}
}

// TestSandboxReadOnlyRPC: under --sandbox read-only every way of writing
// fails, in the workspace and the temp dir alike, and reading works.
func TestSandboxReadOnlyRPC(t *testing.T) {
	needSandbox(t)
	base, bin := sharedBase(t)
	for _, u := range sandboxUsers(t) {
		t.Run(u.name, func(t *testing.T) {
			ws := openDir(t, base, u.name, "ws")
			kept := filepath.Join(ws, "kept.txt")
			os.WriteFile(kept, []byte("kept\n"), 0o666)
			os.Chmod(kept, 0o666)
			cases := readOnlyCases()
			p := startRPCAs(t, bin, u.cred, userEnv(t, base, u.name), "--provider", "scripted", "--script", scriptOf(t, filepath.Join(base, u.name), cases), "--cwd", ws, "--sandbox", "read-only")
			if st := rpcSandboxState(t, p); st.Mode != wire.SandboxModeReadOnly || st.Network {
				t.Errorf("get_state's sandbox: %+v", st)
			}
			checkResults(t, cases, rpcResults(t, p))
			if got := fileText(t, kept); got != "kept\n" {
				t.Errorf("kept.txt holds %q", got)
			}
			if entries, _ := os.ReadDir(ws); len(entries) != 1 {
				t.Errorf("the workspace changed: %v", entries)
			}
		})
	}
}

// TestSandboxGoTestRPC: go in the workspace still works in the sandbox:
// the toolchain and module cache are read, the build cache written where
// --sandbox-writable allows it. As zot's user, go test with the go
// command's own build cache (warm); as nobody, go build of a package that
// imports nothing, with a fresh cache (a go test would first compile the
// standard library into it, minutes on a busy machine).
func TestSandboxGoTestRPC(t *testing.T) {
	needSandbox(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	base, bin := sharedBase(t)
	for _, u := range sandboxUsers(t) {
		t.Run(u.name, func(t *testing.T) {
			ws, cases, env, cache := goWorkspace(t, base, u, goBin, "ws")
			p := startRPCAs(t, bin, u.cred, env, "--provider", "scripted", "--script", scriptOf(t, filepath.Join(base, u.name), cases), "--cwd", ws, "--sandbox-writable", cache)
			checkResults(t, cases, rpcResults(t, p))
		})
	}
}

// goWorkspace makes base/<u.name>/<name>, a Go module with a test, and
// returns it with the calls that build or test it in the sandbox (go
// test with the go command's own warm build cache as zot's user; go
// build with a fresh one as nobody), the environment of zot and the build
// cache to allow with --sandbox-writable.
func goWorkspace(t *testing.T, base string, u sandboxUser, goBin, name string) (ws string, cases []sandboxCase, env []string, cache string) {
	t.Helper()
	ws = openDir(t, base, u.name, name)
	os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module example.com/m\n\ngo 1.21\n"), 0o666)
	os.WriteFile(filepath.Join(ws, "m.go"), []byte("package m\n\nfunc F() int { return 1 }\n"), 0o666)
	os.WriteFile(filepath.Join(ws, "m_test.go"), []byte("package m\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) {\n\tif F() != 1 {\n\t\tt.Fatal(F())\n\t}\n}\n"), 0o666)
	cache, goCmd := openDir(t, base, u.name, name+"-gocache"), "go build ./... && echo built"
	want := "built"
	if u.cred == nil {
		out, err := exec.Command(goBin, "env", "GOCACHE").Output()
		if err != nil {
			t.Fatal(err)
		}
		cache, goCmd, want = strings.TrimSpace(string(out)), "go test -count=1 ./... 2>&1", "ok"
	}
	cases = []sandboxCase{
		{what: goCmd, tool: "bash", args: map[string]any{"command": goCmd}, want: want},
		{what: "go env GOCACHE", tool: "bash", args: map[string]any{"command": "go env GOCACHE"}, want: cache},
	}
	env = append(userEnv(t, base, u.name), "GOCACHE="+cache, "GOPATH="+filepath.Join(base, u.name, "gopath"),
		"GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "PATH="+filepath.Dir(goBin)+":/usr/bin:/bin")
	return ws, cases, env, cache
}

// TestSandboxACP: the same sandbox over ACP (zot acp, and the daemon):
// bash's writes outside and its sockets fail, the file tools refuse, and
// _zot/status shows each session's sandbox.
func TestSandboxACP(t *testing.T) {
	needSandbox(t)
	base, bin := sharedBase(t)
	port := loopback(t)
	for _, u := range sandboxUsers(t) {
		t.Run(u.name, func(t *testing.T) {
			ws, out := openDir(t, base, u.name, "ws"), openDir(t, base, u.name, "out")
			os.Symlink(out, filepath.Join(ws, "link"))
			cases := workspaceCases(ws, out, port)
			cmd := exec.Command(bin, "acp", "--provider", "scripted", "--script", scriptOf(t, filepath.Join(base, u.name), cases), "--permission", "allow")
			env := userEnv(t, base, u.name)
			cmd.Env = append(doorEnv(strings.TrimPrefix(env[0], "ZOT_HOME=")), env[1])
			if u.cred != nil {
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: u.cred}
			}
			stdin, stdout, _ := startPiped(t, cmd)
			defer stdin.Close()
			p := checked(t, newDoorPeer(t, stdin, stdout))
			p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{"terminal":true}}`, "")
			f, _ := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, ws), "")
			id := sessionID(t, f)
			// The file tools' refused writes are asked about: rejected.
			_, frames := p.call("3", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}`, id), "reject_once")
			checkResults(t, cases, acpResults(t, frames))
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Errorf("written outside the workspace: %v", entries)
			}
			st, _ := p.call("4", "_zot/status", `{}`, "")
			var status struct {
				Sessions []struct {
					Sandbox struct {
						Mode       string `json:"mode"`
						Network    bool   `json:"network"`
						EnforcedBy string `json:"enforcedBy"`
					} `json:"sandbox"`
				} `json:"sessions"`
			}
			if err := json.Unmarshal(st.Result, &status); err != nil || len(status.Sessions) != 1 ||
				status.Sessions[0].Sandbox.Mode != "workspace-write" || status.Sessions[0].Sandbox.Network || status.Sessions[0].Sandbox.EnforcedBy != "landlock" {
				t.Errorf("_zot/status: %s", st.raw)
			}
		})
	}
}

// acpResults collects each tool call's last status and text content.
func acpResults(t *testing.T, frames []doorFrame) map[string]result {
	t.Helper()
	out := map[string]result{}
	for _, f := range frames {
		if f.Method != "session/update" {
			continue
		}
		var u struct {
			Update struct {
				Kind    string `json:"sessionUpdate"`
				ID      string `json:"toolCallId"`
				Status  string `json:"status"`
				Content []struct {
					Content struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"content"`
			} `json:"update"`
		}
		if json.Unmarshal(f.Params, &u) != nil || u.Update.Kind != "tool_call_update" {
			continue
		}
		switch u.Update.Status {
		case "completed", "failed":
			var text strings.Builder
			for _, c := range u.Update.Content {
				text.WriteString(c.Content.Text)
			}
			out[u.Update.ID] = result{isError: u.Update.Status == "failed", text: text.String()}
		}
	}
	return out
}

// permissionCases are the calls of the permission request tests: writes
// to out (outside the workspace) allowed once, rejected, allowed always
// and then made again unasked, and a write inside.
func permissionCases(out string) []sandboxCase {
	return []sandboxCase{
		{what: "allowed once", tool: "write", args: map[string]any{"path": out + "/once", "content": "x"}},
		{what: "rejected", tool: "write", args: map[string]any{"path": out + "/rejected", "content": "x"}, refused: true, want: "did not allow writing outside the sandbox"},
		{what: "allowed always", tool: "write", args: map[string]any{"path": out + "/always", "content": "x"}},
		{what: "again, unasked", tool: "edit", args: map[string]any{"path": out + "/always", "edits": []any{map[string]any{"oldText": "x", "newText": "y"}}}},
		{what: "inside, unasked", tool: "write", args: map[string]any{"path": "inside", "content": "x"}},
	}
}

// TestSandboxPermissionRequest: with somebody to answer, a write the
// sandbox refuses is asked about, naming the path and the rule: allow
// once lets that call write, reject refuses it with a reason, allow
// always lets the session write the path from then on without asking;
// over zot rpc (--approve) and over ACP, in accept_edits mode (where
// writes inside the workspace run unasked).
func TestSandboxPermissionRequest(t *testing.T) {
	needSandbox(t)
	base, bin := sharedBase(t)
	ws := openDir(t, base, "ws")
	// The answers in zot rpc's words.
	answers := []string{"allow_once", "reject", "allow_always"}

	t.Run("rpc", func(t *testing.T) {
		out := openDir(t, base, "out")
		cases := permissionCases(out)
		p := startRPCAs(t, bin, nil, userEnv(t, base, "rpc"), "--provider", "scripted", "--script", scriptOf(t, openDir(t, base, "rpc"), cases),
			"--cwd", ws, "--approve", "--sandbox", "workspace-write")
		p.send(`{"id":"m","type":"set_mode","mode":"accept_edits"}`)
		p.response()
		p.send(`{"id":"p","type":"prompt","message":"go"}`)
		resp, _ := p.response()
		wantResponse(t, resp, "prompt", true, "")
		results := map[string]result{}
		asked := 0
		for {
			f := p.next()
			if f.ev == nil {
				continue
			}
			switch ev := f.ev.(type) {
			case *wire.PermissionRequestEvent:
				if !strings.Contains(ev.Sandbox, out) || !strings.Contains(ev.Sandbox, "outside the writable folders") || ev.Rule != "" {
					t.Errorf("request %d: sandbox %q rule %q", asked, ev.Sandbox, ev.Rule)
				}
				if asked >= len(answers) {
					t.Fatalf("asked %d times: %+v", asked+1, ev)
				}
				p.send(fmt.Sprintf(`{"id":"a%d","type":"answer_permission","request_id":%q,"decision":%q}`, asked, ev.RequestID, answers[asked]))
				asked++
			case *wire.ToolResultEvent:
				var text strings.Builder
				for _, b := range ev.Content {
					if tb, ok := b.(*wire.TextBlock); ok {
						text.WriteString(tb.Text)
					}
				}
				results[ev.ID] = result{isError: ev.IsError, text: text.String()}
			}
			if _, done := f.ev.(*wire.DoneEvent); done {
				break
			}
		}
		if asked != len(answers) {
			t.Errorf("asked %d times, want %d", asked, len(answers))
		}
		checkResults(t, cases, results)
		if fileText(t, out+"/once") != "x" || fileText(t, out+"/always") != "y" || fileText(t, out+"/rejected") != "<absent>" {
			t.Errorf("outside: once %q, always %q, rejected %q", fileText(t, out+"/once"), fileText(t, out+"/always"), fileText(t, out+"/rejected"))
		}
	})

	t.Run("acp", func(t *testing.T) {
		out2 := openDir(t, base, "out2")
		cases := permissionCases(out2)
		cmd := exec.Command(bin, "acp", "--provider", "scripted", "--script", scriptOf(t, openDir(t, base, "acp"), cases), "--sandbox", "workspace-write")
		env := userEnv(t, base, "acp")
		cmd.Env = append(doorEnv(strings.TrimPrefix(env[0], "ZOT_HOME=")), env[1])
		stdin, stdout, _ := startPiped(t, cmd)
		defer stdin.Close()
		acpSandboxPermission(t, checked(t, newDoorPeer(t, stdin, stdout)), ws, out2, cases)
	})
}

// acpSandboxPermission runs, on p (an ACP client of a zot run with
// --sandbox workspace-write), a prompt whose calls are cases (casesFor's,
// writing to out) in a session in ws under accept_edits, answering the
// sandbox's permission requests allow once, reject, allow always, and
// checks what each call did.
func acpSandboxPermission(t *testing.T, p *acpPeer, ws, out2 string, cases []sandboxCase) {
	t.Helper()
	acpAnswers := []string{"allow_once", "reject_once", "allow_always"}
	p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, "")
	f, _ := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, ws), "")
	id := sessionID(t, f)
	p.call("3", "session/set_mode", fmt.Sprintf(`{"sessionId":%q,"modeId":"accept_edits"}`, id), "")
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`, id))
	var frames []doorFrame
	asked := 0
	for {
		f := p.next()
		if f.Method == "" && string(f.ID) == "4" {
			break
		}
		if f.Method == "session/request_permission" {
			var req struct {
				ToolCall struct {
					Title string         `json:"title"`
					Meta  map[string]any `json:"_meta"`
				} `json:"toolCall"`
				Options []struct {
					OptionID string `json:"optionId"`
				} `json:"options"`
			}
			json.Unmarshal(f.Params, &req)
			var ids []string
			for _, o := range req.Options {
				ids = append(ids, o.OptionID)
			}
			if strings.Join(ids, " ") != "allow_once allow_always reject_once" || !strings.HasPrefix(req.ToolCall.Title, "Outside the sandbox") ||
				!strings.Contains(fmt.Sprint(req.ToolCall.Meta), out2) {
				t.Errorf("request %d: %s", asked, f.Params)
			}
			if asked >= len(acpAnswers) {
				t.Fatalf("asked %d times", asked+1)
			}
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":%q}}}`, f.ID, acpAnswers[asked]))
			asked++
			continue
		}
		frames = append(frames, f)
	}
	if asked != len(acpAnswers) {
		t.Errorf("asked %d times, want %d", asked, len(acpAnswers))
	}
	checkResults(t, cases, acpResults(t, frames))
	if fileText(t, out2+"/once") != "x" || fileText(t, out2+"/always") != "y" || fileText(t, out2+"/rejected") != "<absent>" {
		t.Errorf("outside: once %q, always %q, rejected %q", fileText(t, out2+"/once"), fileText(t, out2+"/always"), fileText(t, out2+"/rejected"))
	}
}

// TestSandboxBashDescription: bash's description, which the model reads
// with every request, says what the session's sandbox is, stays the same
// from request to request while the sandbox does (a prompt cache keeps
// it), and changes with set_sandbox and /jail.
func TestSandboxBashDescription(t *testing.T) {
	srv := providertest.NewBoundServer(t, "")
	ws := t.TempDir()
	p := start(t, nil, "rpc", "--provider", "anthropic", "--model", "claude-sonnet-5-5", "--api-key", "test-key",
		"--base-url", srv.URL, "--cwd", ws, "--tools", "bash", "--strict-mcp-config")
	prompt := func() {
		t.Helper()
		p.send(`{"id":"p","type":"prompt","message":"go"}`)
		r, _ := p.response()
		wantResponse(t, r, "prompt", true, "")
		p.untilDone()
	}
	prompt()
	prompt()
	p.send(`{"id":"s","type":"set_sandbox","mode":"full","network":true}`)
	r, _ := p.response()
	wantResponse(t, r, "set_sandbox", true, "")
	prompt()
	p.send(`{"id":"j","type":"run_command","name":"jail","args":"read-only"}`)
	r, _ = p.response()
	wantResponse(t, r, "run_command", true, "")
	prompt()
	_, _, _, bodies := srv.Stats()
	var descs []string
	for _, b := range bodies {
		tools, _ := b["tools"].([]any)
		for _, tl := range tools {
			if m, _ := tl.(map[string]any); m["name"] == "bash" {
				d, _ := m["description"].(string)
				descs = append(descs, d)
			}
		}
	}
	if len(descs) != 4 {
		t.Fatalf("%d requests offered bash, want 4", len(descs))
	}
	confined := "may write files only under " + ws
	if sandbox.Probe().Backend == sandbox.BackendNone {
		t.Logf("no sandbox here (%s)", sandbox.Probe())
	}
	if !strings.Contains(descs[0], confined) || !strings.Contains(descs[0], "network is off") || strings.Contains(descs[0], "not sandboxed") {
		t.Errorf("under workspace-write: %s", descs[0])
	}
	if descs[1] != descs[0] {
		t.Errorf("the description changed while the sandbox did not:\n%s\n%s", descs[0], descs[1])
	}
	if !strings.Contains(descs[2], "not sandboxed") || strings.Contains(descs[2], confined) {
		t.Errorf("under full: %s", descs[2])
	}
	if !strings.Contains(descs[3], "may write no file anywhere (read-only)") {
		t.Errorf("under read-only: %s", descs[3])
	}
}

// TestSandboxWriteRacesSymlinkSwap: through zot rpc, a turn of many
// writes into a folder of the workspace that the test keeps swapping
// with a symbolic link to a folder outside (renameat2's RENAME_EXCHANGE)
// never writes outside: the file tools place each write beneath the
// workspace (openat2), not through the path the sandbox checked.
func TestSandboxWriteRacesSymlinkSwap(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	ws, out := filepath.Join(base, "ws"), filepath.Join(base, "out")
	for _, d := range []string{filepath.Join(ws, "sub"), out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(out, filepath.Join(ws, "swap")); err != nil {
		t.Fatal(err)
	}
	var cases []sandboxCase
	for i := range 600 {
		cases = append(cases, sandboxCase{tool: "write", args: map[string]any{"path": fmt.Sprintf("sub/f%d", i%7), "content": "x"}})
	}
	p := startRPCAs(t, zotBin, nil, []string{"ZOT_HOME=" + openDir(t, base, "home"), "TMPDIR=" + openDir(t, base, "tmp")},
		"--provider", "scripted", "--script", scriptOf(t, base, cases), "--cwd", ws, "--sandbox", "workspace-write", "--max-steps", "2000")
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := unix.Renameat2(unix.AT_FDCWD, filepath.Join(ws, "sub"), unix.AT_FDCWD, filepath.Join(ws, "swap"), unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("exchange: %v", err)
				return
			}
		}
	}()
	results := rpcResults(t, p)
	close(stop)
	<-done
	wrote := 0
	for _, r := range results {
		if !r.isError {
			wrote++
		}
	}
	t.Logf("%d of %d writes wrote", wrote, len(cases))
	if len(results) != len(cases) {
		t.Errorf("%d results, want %d", len(results), len(cases))
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("written outside the workspace: %s", strings.Join(names, ", "))
	}
}

// TestSandboxAllowOnceEndsWithItsCall: through zot acp, a write outside
// the workspace the user allowed once, whose call then fails before it
// writes (an edit whose text is not in the file), leaves nothing behind:
// a later edit in the workspace, whose file is swapped for a symbolic
// link to that outside file while the editor reads it, writes nothing
// (the editor offers reading only, so zot writes the disk itself).
func TestSandboxAllowOnceEndsWithItsCall(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	ws, out := openDir(t, base, "ws"), openDir(t, base, "out")
	secret, f := filepath.Join(out, "secret"), filepath.Join(ws, "f")
	if err := os.WriteFile(secret, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, []byte("start\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []sandboxCase{
		{tool: "edit", args: map[string]any{"path": secret, "edits": []any{map[string]any{"old_text": "absent", "new_text": "x"}}}},
		{tool: "edit", args: map[string]any{"path": "f", "edits": []any{map[string]any{"old_text": "start", "new_text": "x"}}}},
	}
	cmd := exec.Command(zotBin, "acp", "--provider", "scripted", "--script", scriptOf(t, base, cases), "--sandbox", "workspace-write")
	// TMPDIR, which the sandbox lets commands write, away from out.
	cmd.Env = append(doorEnv(openDir(t, base, "home")), "TMPDIR="+openDir(t, base, "tmp"))
	stdin, stdout, stderr := startPiped(t, cmd)
	defer stdin.Close()
	p := checked(t, newDoorPeer(t, stdin, stdout))
	p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}}}`, "")
	fr, _ := p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, ws), "")
	id := sessionID(t, fr)
	p.call("3", "session/set_mode", fmt.Sprintf(`{"sessionId":%q,"modeId":"accept_edits"}`, id), "")
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`, id))
	asked := 0
	var frames []doorFrame
	for {
		fr := p.next()
		if fr.Method == "" && string(fr.ID) == "4" {
			if fr.Error != nil {
				t.Fatalf("prompt: %s\n%s", fr.raw, stderr)
			}
			break
		}
		switch fr.Method {
		case "session/request_permission":
			asked++
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":"allow_once"}}}`, fr.ID))
			continue
		case "fs/read_text_file":
			var q struct {
				Path string `json:"path"`
			}
			json.Unmarshal(fr.Params, &q)
			text := "keep\n"
			if q.Path == f {
				// Checked, now swapped for a link to the file allowed once.
				text = "start\n"
				if err := os.Rename(f, f+".old"); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(secret, f); err != nil {
					t.Fatal(err)
				}
			}
			b, _ := json.Marshal(map[string]string{"content": text})
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, fr.ID, b))
			continue
		}
		frames = append(frames, fr)
	}
	if asked != 1 {
		t.Errorf("asked %d times, want 1 (the edit outside)", asked)
	}
	failed := 0
	for _, u := range updates(frames) {
		if u["sessionUpdate"] == "tool_call_update" && u["status"] == "failed" {
			failed++
		}
	}
	if failed != 2 {
		t.Errorf("%d calls failed, want both", failed)
	}
	if got := fileText(t, secret); got != "keep\n" {
		t.Errorf("the file outside the workspace was written: %q", got)
	}
}

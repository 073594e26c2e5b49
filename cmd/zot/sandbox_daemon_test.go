package main

// The sandbox through zot daemon, a client on its Unix socket (the test
// itself for its own user; zot daemon connect, run as that user, for
// nobody, since the daemon takes clients of its own uid only): the same
// cases as zot rpc's and zot acp's, as zot's user and, when the tests run
// as root, as nobody.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// sandboxDaemon starts zot daemon (bin) as u with args, its home, socket
// and temp dir of its own under base/<u.name>/<name> and extra in its
// environment, and returns an ACP client on its socket.
func sandboxDaemon(t *testing.T, base, bin string, u sandboxUser, extra []string, name string, args ...string) *acpPeer {
	t.Helper()
	dir := openDir(t, base, u.name, name)
	sock := filepath.Join(dir, "s", "d.sock") // s is made by the daemon, as its user's
	env := doorEnv(openDir(t, dir, "home"), append([]string{"TMPDIR=" + openDir(t, dir, "tmp"), "ZOT_SOCKET=" + sock}, extra...)...)
	cmd := exec.Command(bin, append([]string{"daemon"}, args...)...)
	cmd.Env = env
	if u.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: u.cred}
	}
	d := startDaemonCmd(t, cmd)
	d.waitFor(t, "listening on")
	if u.cred == nil {
		dp, _ := dialDoor(t, sock)
		return checked(t, dp)
	}
	conn := exec.Command(bin, "daemon", "connect")
	conn.Env, conn.Dir = env, dir
	conn.SysProcAttr = &syscall.SysProcAttr{Credential: u.cred}
	stdin, stdout, _ := startPiped(t, conn)
	t.Cleanup(func() { stdin.Close() })
	return checked(t, newDoorPeer(t, stdin, stdout))
}

// daemonSandbox asks _zot/session/sandbox to change the session's
// sandbox (params beside the session's id) and returns the answer's
// sandbox, failing the test on an error.
func daemonSandbox(t *testing.T, p *acpPeer, reqID, sessionID, params string) (mode string, network bool) {
	t.Helper()
	if params != "" {
		params = "," + params
	}
	f, _ := p.call(reqID, "_zot/session/sandbox", fmt.Sprintf(`{"sessionId":%q%s}`, sessionID, params), "")
	var r struct {
		Sandbox struct {
			Mode    string `json:"mode"`
			Network bool   `json:"network"`
		} `json:"sandbox"`
	}
	if f.Error != nil || json.Unmarshal(f.Result, &r) != nil || r.Sandbox.Mode == "" {
		t.Fatalf("_zot/session/sandbox %s: %s", params, f.raw)
	}
	return r.Sandbox.Mode, r.Sandbox.Network
}

// TestSandboxDaemon: zot daemon, driven over its socket, confines bash
// and the file tools as zot rpc and zot acp do, as zot's user and as
// nobody: under workspace-write (the default of its auto mode) writes
// outside the workspace fail however they are made (/tmp/../etc, a
// symbolic link planted in the workspace, cd / && touch, a Python child)
// and sockets fail with the network off; under read-only every way of
// writing fails; go builds and tests in the workspace; with someone to
// ask, a write outside is asked about, offering allow once and always
// for the path; and _zot/session/sandbox reads and changes the sandbox,
// the next command running under the new one.
func TestSandboxDaemon(t *testing.T) {
	needSandbox(t)
	base, bin := sharedBase(t)
	port := loopback(t)
	for _, u := range sandboxUsers(t) {
		t.Run(u.name, func(t *testing.T) {
			t.Run("workspace-write", func(t *testing.T) {
				ws, out := openDir(t, base, u.name, "ws"), openDir(t, base, u.name, "out")
				if err := os.Symlink(out, filepath.Join(ws, "link")); err != nil {
					t.Fatal(err)
				}
				cases := workspaceCases(ws, out, port)
				// A second turn writes outside with bash, after the
				// client lifted the sandbox.
				after := []sandboxCase{{what: "after full", tool: "bash", args: map[string]any{"command": "echo x > " + out + "/after-full && echo wrote"}, want: "wrote"}}
				script := scriptOf(t, openDir(t, base, u.name, "ww-script"), cases)
				twoTurns(t, script, after)
				p := sandboxDaemon(t, base, bin, u, nil, "ww", "--provider", "scripted", "--script", script, "--permission", "allow")
				// No terminal: once the sandbox confines nothing, bash
				// would run in the client's.
				p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, "")
				id := sessionID(t, first(p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, ws), "")))
				if mode, network := daemonSandbox(t, p, "3", id, ""); mode != "workspace-write" || network {
					t.Errorf("the sandbox at the start: %s, network %v", mode, network)
				}
				_, frames := p.call("4", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}`, id), "reject_once")
				checkResults(t, cases, acpResults(t, frames))
				if entries, _ := os.ReadDir(out); len(entries) != 0 {
					t.Errorf("written outside the workspace: %v", entries)
				}
				for _, f := range []string{"/etc/zot-sandbox-probe", "/zot-sandbox-probe"} {
					if _, err := os.Stat(f); err == nil {
						os.Remove(f)
						t.Errorf("%s was written", f)
					}
				}
				// A mode that is not one is refused, naming the field.
				p.sendBad(fmt.Sprintf(`{"jsonrpc":"2.0","id":5,"method":"_zot/session/sandbox","params":{"sessionId":%q,"mode":"sometimes"}}`, id))
				if f := p.nextBad(); f.Error == nil || f.Error.Code != -32602 || f.Error.Data["field"] != "mode" {
					t.Errorf("mode sometimes: %s", f.raw)
				}
				if mode, network := daemonSandbox(t, p, "6", id, `"mode":"full","network":true`); mode != "full" || !network {
					t.Errorf("after mode full: %s, network %v", mode, network)
				}
				_, frames = p.call("7", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"again"}]}`, id), "reject_once")
				checkResults(t, after, acpResults(t, frames))
				if fileText(t, out+"/after-full") != "x\n" {
					t.Errorf("after full: %q", fileText(t, out+"/after-full"))
				}
			})

			t.Run("read-only", func(t *testing.T) {
				ws := openDir(t, base, u.name, "ro-ws")
				kept := filepath.Join(ws, "kept.txt")
				os.WriteFile(kept, []byte("kept\n"), 0o666)
				os.Chmod(kept, 0o666)
				cases := readOnlyCases()
				p := sandboxDaemon(t, base, bin, u, nil, "ro", "--provider", "scripted", "--script", scriptOf(t, openDir(t, base, u.name, "ro-script"), cases),
					"--permission", "allow", "--sandbox", "read-only")
				p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, "")
				id := sessionID(t, first(p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, ws), "")))
				_, frames := p.call("3", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}`, id), "reject_once")
				checkResults(t, cases, acpResults(t, frames))
				if got := fileText(t, kept); got != "kept\n" {
					t.Errorf("kept.txt holds %q", got)
				}
				if entries, _ := os.ReadDir(ws); len(entries) != 1 {
					t.Errorf("the workspace changed: %v", entries)
				}
			})

			t.Run("go", func(t *testing.T) {
				goBin, err := exec.LookPath("go")
				if err != nil {
					t.Skip("no go command")
				}
				ws, cases, env, cache := goWorkspace(t, base, u, goBin, "go-ws")
				p := sandboxDaemon(t, base, bin, u, env[2:], "go", "--provider", "scripted", "--script", scriptOf(t, openDir(t, base, u.name, "go-script"), cases),
					"--permission", "allow", "--sandbox-writable", cache)
				p.call("1", "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, "")
				id := sessionID(t, first(p.call("2", "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, ws), "")))
				_, frames := p.call("3", "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}`, id), "reject_once")
				checkResults(t, cases, acpResults(t, frames))
			})

			t.Run("permission request", func(t *testing.T) {
				ws, out := openDir(t, base, u.name, "pr-ws"), openDir(t, base, u.name, "pr-out")
				cases := permissionCases(out)
				p := sandboxDaemon(t, base, bin, u, nil, "pr", "--provider", "scripted", "--script", scriptOf(t, openDir(t, base, u.name, "pr-script"), cases),
					"--sandbox", "workspace-write")
				acpSandboxPermission(t, p, ws, out, cases)
			})
		})
	}
}

// twoTurns adds to the script at path (scriptOf's) a second turn of the
// calls of cases, with the ids checkResults reads (c0, c1, …).
func twoTurns(t *testing.T, path string, cases []sandboxCase) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string][]any
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	var steps []map[string]any
	for i, c := range cases {
		steps = append(steps, map[string]any{"tool_calls": []any{map[string]any{"id": fmt.Sprintf("c%d", i), "name": c.tool, "args": c.args}}})
	}
	s["turns"] = append(s["turns"], turnOf(steps...))
	if data, err = json.Marshal(s); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"zot.dev/zot/internal/zotbin"
	"zot.dev/zot/sdk/wire"
)

// zotHomeEnv returns a fresh ZOT_HOME for one test, as an environment
// entry, and its path.
func zotHomeEnv(t *testing.T) (string, string) {
	t.Helper()
	h := t.TempDir()
	return "ZOT_HOME=" + h, h
}

// runZot runs zot to its end and returns its stdout, stderr and exit
// status.
func runExt(t *testing.T, env []string, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(zotBin, args...)
	cmd.Env = append(cleanEnv(), env...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(hangGuard):
		cmd.Process.Kill()
		<-done
		t.Fatalf("zot %v did not end", args)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// writeExt writes an extension folder: its manifest (raw JSON) and
// files (name → content; names ending in .sh, .py or .mjs, and the
// program, are executable).
func writeExt(t *testing.T, dir, manifest string, files map[string]string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "extension.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// loaded asks `zot rpc`, with the given home, which extensions it loads.
func loaded(t *testing.T, env []string) []string {
	t.Helper()
	p := start(t, env, rpcArgs(t)...)
	// reload_extensions answers once the handshakes are over.
	r, _ := p.call(`{"id":"1","type":"reload_extensions"}`)
	var res wire.ExtensionsResult
	if err := json.Unmarshal(r.Data, &res); err != nil {
		t.Fatal(err)
	}
	p.exit()
	var names []string
	for _, e := range res.Extensions {
		names = append(names, e.Name+":"+e.State)
	}
	return names
}

// install, list, disable (which discovery honours), enable, remove.
func TestExtLifecycle(t *testing.T) {
	homeEnv, home := zotHomeEnv(t)
	env := []string{homeEnv}
	cwd := t.TempDir()
	src := pyExtension(t, t.TempDir(), "py", "ok")
	// A hand-written manifest, to see that enable and disable keep it as
	// it was written.
	manifest := "{\n  \"name\": \"py\",\n  \"exec\": \"python3\",\n  \"args\": " + mustJSON(t, []string{filepath.Join(mustAbs(t, "../../internal/exthost/testdata/py"), "ext.py"), "ok", "py"}) + ",\n  \"language\": \"python\"\n}\n"
	writeExt(t, src, manifest, nil)

	out, errOut, code := runExt(t, env, cwd, "ext", "install", src)
	if code != 0 || !strings.Contains(out, "installed py in "+filepath.Join(home, "extensions", "py")) {
		t.Fatalf("install: %d\n%s%s", code, out, errOut)
	}
	out, _, _ = runExt(t, env, cwd, "ext", "list")
	if !strings.Contains(out, "NAME") || !regexpMatch(out, `py\s+-\s+enabled\s+user\s+python`) {
		t.Fatalf("list:\n%s", out)
	}
	if got := loaded(t, env); strings.Join(got, ",") != "py:ready" {
		t.Fatalf("loaded %v", got)
	}

	out, _, code = runExt(t, env, cwd, "ext", "disable", "py")
	if code != 0 || !strings.Contains(out, "disabled py") {
		t.Fatalf("disable: %d %s", code, out)
	}
	data, _ := os.ReadFile(filepath.Join(home, "extensions", "py", "extension.json"))
	if want := strings.TrimSuffix(manifest, "\n}\n") + ",\n  \"enabled\": false\n}\n"; string(data) != want {
		t.Fatalf("disabled manifest:\n%s\nwant\n%s", data, want)
	}
	if got := loaded(t, env); len(got) != 0 {
		t.Fatalf("a disabled extension loaded: %v", got)
	}
	out, _, _ = runExt(t, env, cwd, "ext", "list")
	if !regexpMatch(out, `py\s+-\s+disabled`) {
		t.Fatalf("list after disable:\n%s", out)
	}
	out, _, _ = runExt(t, env, cwd, "ext", "disable", "py")
	if !strings.Contains(out, "already disabled") {
		t.Fatalf("second disable: %s", out)
	}

	if out, _, code = runExt(t, env, cwd, "ext", "enable", "py"); code != 0 {
		t.Fatalf("enable: %s", out)
	}
	data, _ = os.ReadFile(filepath.Join(home, "extensions", "py", "extension.json"))
	if !strings.Contains(string(data), `"enabled": true`) || !strings.HasPrefix(string(data), "{\n  \"name\": \"py\",\n  \"exec\"") {
		t.Fatalf("enabled manifest:\n%s", data)
	}
	if got := loaded(t, env); strings.Join(got, ",") != "py:ready" {
		t.Fatalf("loaded after enable %v", got)
	}

	if out, errOut, code = runExt(t, env, cwd, "ext", "remove", "py"); code != 0 || !strings.Contains(out, "removed py") {
		t.Fatalf("remove: %d %s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, "extensions", "py")); !os.IsNotExist(err) {
		t.Fatalf("still there after remove: %v", err)
	}
	_, errOut, code = runExt(t, env, cwd, "ext", "remove", "py")
	if code != 1 || !strings.Contains(errOut, `no extension named "py"`) {
		t.Fatalf("removing a missing one: %d %s", code, errOut)
	}
	_, errOut, code = runExt(t, env, cwd, "ext", "frobnicate")
	if code != 2 || !strings.Contains(errOut, `unknown command "frobnicate" for zot ext`) {
		t.Fatalf("unknown subcommand: %d %s", code, errOut)
	}
}

// Every failure of install leaves the extensions folder as it was: no
// half-copied extension, no temporary folder.
func TestExtInstallRollsBack(t *testing.T) {
	homeEnv, home := zotHomeEnv(t)
	env := []string{homeEnv}
	cwd := t.TempDir()
	exts := filepath.Join(home, "extensions")
	srcs := t.TempDir()

	fifo := writeExt(t, filepath.Join(srcs, "fifo"), `{"name":"fifo","exec":"./run.sh"}`, map[string]string{"run.sh": "#!/bin/sh\n"})
	if err := syscall.Mkfifo(filepath.Join(fifo, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, src, want string
	}{
		{"bad manifest", writeExt(t, filepath.Join(srcs, "bad"), `{"name":"bad","exec":3}`, nil), "at /exec"},
		{"no manifest", t.TempDir(), "not an extension: no extension.json"},
		{"not built", writeExt(t, filepath.Join(srcs, "gobin"), `{"name":"gobin","exec":"./gobin","language":"go"}`, nil), "exec ./gobin does not exist in the extension (build it first: go build -o ./gobin .)"},
		{"bad name", writeExt(t, filepath.Join(srcs, "slash"), `{"name":"../up","exec":"python3"}`, nil), `name "../up" cannot name a folder`},
		{"special file", fifo, "pipe is not a regular file"},
		{"missing", filepath.Join(srcs, "nope"), "no such folder, and not a git URL"},
		{"the home itself", home, "holds the extensions folder"},
	} {
		_, errOut, code := runExt(t, env, cwd, "ext", "install", c.src)
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want %q", c.name, code, errOut, c.want)
		}
		if entries, _ := os.ReadDir(exts); len(entries) != 0 {
			t.Errorf("%s: left %v in %s", c.name, entries[0].Name(), exts)
		}
	}

	// An installed extension is not replaced without --force; with it,
	// it is.
	v1 := writeExt(t, filepath.Join(srcs, "v1"), `{"name":"dup","version":"1","exec":"python3"}`, nil)
	v2 := writeExt(t, filepath.Join(srcs, "v2"), `{"name":"dup","version":"2","exec":"python3"}`, nil)
	if out, errOut, code := runExt(t, env, cwd, "ext", "install", v1); code != 0 {
		t.Fatalf("install v1: %s%s", out, errOut)
	}
	if _, errOut, code := runExt(t, env, cwd, "ext", "install", v2); code != 1 || !strings.Contains(errOut, "already installed") {
		t.Fatalf("install over: %d %s", code, errOut)
	}
	if out, errOut, code := runExt(t, env, cwd, "ext", "install", "--force", v2); code != 0 || !strings.Contains(out, "installed dup 2") {
		t.Fatalf("install --force: %d %s%s", code, out, errOut)
	}
	if entries, _ := os.ReadDir(exts); len(entries) != 1 || entries[0].Name() != "dup" {
		t.Fatalf("after --force: %v", entries)
	}
	if data, _ := os.ReadFile(filepath.Join(exts, "dup", "extension.json")); !strings.Contains(string(data), `"version":"2"`) {
		t.Fatalf("after --force: %s", data)
	}
}

// install <git-url> clones a repository (here a local bare one, by
// file://), and rolls back one that holds no extension.
func TestExtInstallFromGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	homeEnv, home := zotHomeEnv(t)
	env := []string{homeEnv}
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	repo := func(files map[string]string) string {
		work := t.TempDir()
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(work, name), []byte(content), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		git(work, "init", "-q")
		git(work, "add", ".")
		git(work, "commit", "-q", "-m", "x")
		bare := filepath.Join(t.TempDir(), "ext.git")
		git(work, "clone", "-q", "--bare", work, bare)
		return "file://" + bare
	}
	weather, err := os.ReadFile("../../examples/extensions/weather/weather.py")
	if err != nil {
		t.Fatal(err)
	}
	manifest, _ := os.ReadFile("../../examples/extensions/weather/extension.json")
	url := repo(map[string]string{"extension.json": string(manifest), "weather.py": string(weather)})
	out, errOut, code := runExt(t, env, t.TempDir(), "ext", "install", url)
	if code != 0 || !strings.Contains(out, "installed weather 1.0.0") {
		t.Fatalf("install %s: %d %s%s", url, code, out, errOut)
	}
	dir := filepath.Join(home, "extensions", "weather")
	if st, err := os.Stat(filepath.Join(dir, "weather.py")); err != nil || st.Mode()&0o100 == 0 {
		t.Fatalf("weather.py: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); !os.IsNotExist(err) {
		t.Fatalf(".git kept: %v", err)
	}
	if got := loaded(t, env); strings.Join(got, ",") != "weather:ready" {
		t.Fatalf("loaded %v", got)
	}

	empty := repo(map[string]string{"README": "no extension here"})
	_, errOut, code = runExt(t, env, t.TempDir(), "ext", "install", empty)
	if code != 1 || !strings.Contains(errOut, "not an extension") {
		t.Fatalf("install of a repository without a manifest: %d %s", code, errOut)
	}
	_, errOut, code = runExt(t, env, t.TempDir(), "ext", "install", "file:///nonexistent/repo.git")
	if code != 1 || !strings.Contains(errOut, "git clone failed") {
		t.Fatalf("install of a missing repository: %d %s", code, errOut)
	}
	if entries, _ := os.ReadDir(filepath.Join(home, "extensions")); len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
}

func TestExtLogs(t *testing.T) {
	homeEnv, home := zotHomeEnv(t)
	env := []string{homeEnv}
	logs := filepath.Join(home, "logs")
	os.MkdirAll(logs, 0o755)
	file := filepath.Join(logs, "ext-demo.log")
	os.WriteFile(file, []byte("first line\n"), 0o644)

	out, _, code := runExt(t, env, t.TempDir(), "ext", "logs", "demo")
	if code != 0 || out != "first line\n" {
		t.Fatalf("logs: %d %q", code, out)
	}
	_, errOut, code := runExt(t, env, t.TempDir(), "ext", "logs", "other")
	if code != 1 || !strings.Contains(errOut, "no log for extension other yet") {
		t.Fatalf("missing log: %d %s", code, errOut)
	}

	// -f prints what is appended until it is interrupted.
	cmd := exec.Command(zotBin, "ext", "logs", "-f", "demo")
	cmd.Env = append(cleanEnv(), env...)
	stdout := &zotbin.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(hangGuard)
		for !strings.Contains(stdout.String(), want) {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("logs -f never printed %q; got %q", want, stdout.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("first line\n")
	f, _ := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("second line\n")
	f.Close()
	waitFor("first line\nsecond line\n")
	// A truncated log is read again from its start.
	os.WriteFile(file, []byte("after rotation\n"), 0o644)
	waitFor("after rotation\n")
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(hangGuard):
		cmd.Process.Kill()
		t.Fatal("logs -f did not stop on SIGINT")
	}
}

// doctor starts every extension through the host and names what is
// wrong in plain words.
func TestExtDoctor(t *testing.T) {
	homeEnv, home := zotHomeEnv(t)
	env := []string{homeEnv}
	exts := filepath.Join(home, "extensions")
	pyScript := mustAbs(t, "../../internal/exthost/testdata/py/ext.py")
	py := func(name, mode string, hello ...string) string {
		said := name
		if len(hello) > 0 {
			said = hello[0]
		}
		// The ones that must say hello get their own start timeout: a
		// loaded machine can take more than doctor's 1s to start
		// python3, which only e-silent is meant to miss.
		wait := ""
		if mode != "silent" {
			wait = `,"start_timeout_ms":30000`
		}
		return `{"name":"` + name + `","exec":"python3","args":["` + pyScript + `","` + mode + `","` + said + `"]` + wait + `}`
	}
	writeExt(t, filepath.Join(exts, "a-good"), py("a-good", "ok"), nil)
	writeExt(t, filepath.Join(exts, "b-manifest"), `{"name":"b-manifest","exec":["x"]}`, nil)
	writeExt(t, filepath.Join(exts, "c-runtime"), `{"name":"c-runtime","exec":"no-such-runtime-zot"}`, nil)
	writeExt(t, filepath.Join(exts, "d-shebang"), `{"name":"d-shebang","exec":"./run.js"}`, map[string]string{"run.js": "#!/usr/bin/env no-such-node-zot\n"})
	writeExt(t, filepath.Join(exts, "e-silent"), py("e-silent", "silent"), nil)
	writeExt(t, filepath.Join(exts, "f-crash"), `{"name":"f-crash","exec":"./run.sh"}`,
		map[string]string{"run.sh": "#!/bin/sh\necho 'loading config' >&2\necho 'fatal: config.toml is missing' >&2\nexit 3\n"})
	writeExt(t, filepath.Join(exts, "g-name"), py("g-name", "ok", "someone-else"), nil)
	writeExt(t, filepath.Join(exts, "h-off"), `{"name":"h-off","exec":"python3","enabled":false}`, nil)

	out, errOut, code := runExt(t, env, t.TempDir(), "ext", "doctor", "--timeout", "1s")
	if code != 1 || !strings.Contains(errOut, "6 of 8 extensions have problems") {
		t.Fatalf("doctor: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"✓ a-good (user, " + filepath.Join(exts, "a-good") + "): ready; tools a-good_echo, a-good_slow; commands /hello-a-good",
		"✗ b-manifest (user, " + filepath.Join(exts, "b-manifest") + "): bad manifest " + filepath.Join(exts, "b-manifest", "extension.json") + ": at /exec: got array, want string",
		`✗ c-runtime (user, ` + filepath.Join(exts, "c-runtime") + `): its runtime "no-such-runtime-zot" is not on PATH`,
		`✗ d-shebang (user, ` + filepath.Join(exts, "d-shebang") + `): its runtime "no-such-node-zot" (named in the first line of ./run.js) is not on PATH`,
		"✗ e-silent (user, " + filepath.Join(exts, "e-silent") + "): handshake timeout: it did not say hello within 1s",
		"✗ f-crash (user, " + filepath.Join(exts, "f-crash") + "): it crashed during its handshake: extension f-crash exited with status 3",
		"    fatal: config.toml is missing",
		`✗ g-name (user, ` + filepath.Join(exts, "g-name") + `): its hello frame names`,
		"- h-off (user, " + filepath.Join(exts, "h-off") + "): disabled (zot ext enable h-off)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor's report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("report:\n%s", out)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func regexpMatch(s, pattern string) bool { return regexp.MustCompile(pattern).MatchString(s) }

// doctor's last line reads as English for one extension as for many.
func TestExtDoctorCounts(t *testing.T) {
	homeEnv, home := zotHomeEnv(t)
	env := []string{homeEnv}
	exts := filepath.Join(home, "extensions")
	pyScript := mustAbs(t, "../../internal/exthost/testdata/py/ext.py")
	ok := func(name string) string {
		return `{"name":"` + name + `","exec":"python3","args":["` + pyScript + `","ok","` + name + `"]}`
	}
	writeExt(t, filepath.Join(exts, "one"), ok("one"), nil)
	if out, errOut, code := runExt(t, env, t.TempDir(), "ext", "doctor"); code != 0 || !strings.HasSuffix(out, "\nthe extension is fine\n") {
		t.Errorf("one good extension: exit %d\n%s%s", code, out, errOut)
	}
	writeExt(t, filepath.Join(exts, "two"), `{"name":"two","exec":"no-such-runtime-zot"}`, nil)
	if out, errOut, code := runExt(t, env, t.TempDir(), "ext", "doctor"); code != 1 || errOut != "zot: 1 of 2 extensions has problems\n" {
		t.Errorf("one bad of two: exit %d\n%s%s", code, out, errOut)
	}
	writeExt(t, filepath.Join(exts, "one"), `{"name":"one","exec":"no-such-runtime-zot"}`, nil)
	if out, errOut, code := runExt(t, env, t.TempDir(), "ext", "doctor"); code != 1 || errOut != "zot: 2 of 2 extensions have problems\n" {
		t.Errorf("two bad: exit %d\n%s%s", code, out, errOut)
	}
	os.RemoveAll(filepath.Join(exts, "two"))
	if out, errOut, code := runExt(t, env, t.TempDir(), "ext", "doctor"); code != 1 || errOut != "zot: the extension has problems\n" {
		t.Errorf("the one bad: exit %d\n%s%s", code, out, errOut)
	}
}

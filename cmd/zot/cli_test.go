package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"zot.dev/zot/internal/engine"
	"zot.dev/zot/internal/registry"
	"zot.dev/zot/internal/schemacheck"
	"zot.dev/zot/sdk/wire"
)

// runZot runs zot to its end with stdin and extra environment entries,
// and returns its stdout, stderr and exit status.
func runZot(t *testing.T, stdin string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(zotBin, args...)
	cmd.Env = append(cleanEnv(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("zot %q: %v", args, err)
	}
	return out.String(), errb.String(), 0
}

// TestAgentFlagsBeforeAndAfterRPC: the agent flags mean the same before
// and after `rpc`, and with --rpc.
func TestAgentFlagsBeforeAndAfterRPC(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--provider", "scripted", "--cwd", dir, "rpc"},
		{"rpc", "--provider", "scripted", "--cwd", dir},
		{"--provider", "scripted", "rpc", "--cwd", dir},
		{"--cwd", dir, "rpc", "--provider", "scripted"},
		{"--provider", "scripted", "--cwd", dir, "--rpc"},
		{"--max-line-bytes", "2048", "--provider", "scripted", "rpc", "--cwd", dir},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			p := start(t, nil, args...)
			p.send(`{"id":"1","type":"get_state"}`)
			resp, _ := p.response()
			wantResponse(t, resp, "get_state", true, "")
			res, err := resp.Result()
			if err != nil {
				t.Fatal(err)
			}
			if st := res.(*wire.StateResult); st.Provider != "scripted" || st.CWD != dir {
				t.Errorf("provider %q, cwd %q; want scripted, %s", st.Provider, st.CWD, dir)
			}
			if args[0] == "--max-line-bytes" {
				p.send(`{"id":"2","type":"prompt","message":"` + strings.Repeat("x", 3000) + `"}`)
				resp, _ := p.response()
				wantResponse(t, resp, "", false, wire.CodeLineTooLong)
			}
			if code := p.exit(); code != 0 {
				t.Errorf("exit %d; stderr:\n%s", code, p.stderr.String())
			}
		})
	}
	// A flag given on both sides is one flag: the later value wins.
	p := start(t, nil, "--cwd", "/nonexistent", "rpc", "--provider", "scripted", "--cwd", dir)
	p.send(`{"id":"1","type":"ping"}`)
	if resp, _ := p.response(); !resp.Success {
		t.Errorf("ping: %s", resp.Error)
	}
	if code := p.exit(); code != 0 {
		t.Errorf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
}

// TestUsageErrors: a usage error is one line and a hint naming the help
// to read, on stderr, with exit status 2 and nothing on stdout.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string // the first line, after "zot: "
		help string // the command whose help the hint names
	}{
		{[]string{"--foo"}, "unknown flag --foo", "zot"},
		{[]string{"-x", "-p", "hi"}, "unknown flag -x", "zot"},
		{[]string{"rpc", "--foo"}, "unknown flag --foo", "zot rpc"},
		{[]string{"rpc", "-p", "hi"}, "unknown flag -p", "zot rpc"},
		{[]string{"bogus"}, `unknown command "bogus" (not a terminal, so it is not taken as a prompt: zot -p "bogus" runs it once)`, "zot"},
		{[]string{"help", "bogus"}, `unknown command "bogus"`, "zot"},
		{[]string{"rpc", "extra"}, `zot rpc takes no arguments, got "extra"`, "zot rpc"},
		{[]string{"-p"}, "flag -p needs a value", "zot"},
		{[]string{"rpc", "--provider"}, "flag --provider needs a value", "zot rpc"},
		{[]string{"--max-steps", "many", "-p", "hi"}, `invalid value "many" for flag --max-steps: want a whole number`, "zot"},
		{[]string{"-p", "hi", "rpc", "--provider", "scripted"}, "-p does not apply to zot rpc", "zot rpc"},
		{[]string{"-p", "hi", "--max-line-bytes", "5000"}, "--max-line-bytes does not apply to print mode (-p)", "zot"},
		{[]string{"--rpc", "--json"}, "--json does not apply to rpc mode", "zot"},
		{[]string{"-p", "--json", "hi"}, "-p needs a prompt, got the flag --json (to send a prompt that starts with -, use -p - and stdin)", "zot"},
		{[]string{"--provider", "nope", "-p", "hi"}, (&registry.UnknownError{Name: "nope"}).Error(), "zot"},
		{[]string{"rpc", "--provider", "scripted", "--session", "f", "--continue"}, "--session and --continue contradict each other", "zot rpc"},
		{[]string{"--provider", "scripted", "rpc", "--max-line-bytes", "10"}, "--max-line-bytes must be at least 1024", "zot rpc"},
		{[]string{"-p", "hi", "--provider", "scripted", "--tools", "read,bogus"}, `--tools: unknown tool "bogus" (known: read, write, edit, bash, grep, find, ls, skill)`, "zot"},
		{[]string{"rpc", "--provider", "scripted", "--tools", "bogus,read,nope"}, `--tools: unknown tool "bogus", "nope" (known: read, write, edit, bash, grep, find, ls, skill)`, "zot rpc"},
		{[]string{"acp", "--provider", "scripted", "--tools", "bash,bogus"}, `--tools: unknown tool "bogus" (known: read, write, edit, bash, grep, find, ls, skill)`, "zot acp"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, stderr, code := runZot(t, "", nil, tc.args...)
			want := "zot: " + tc.msg + "\nRun '" + tc.help + " --help' for usage.\n"
			if code != 2 || stdout != "" || stderr != want {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 2, no stdout, stderr:\n%s", code, stdout, stderr, want)
			}
		})
	}
}

// TestPromptFromStdin: -p - reads the prompt from stdin.
func TestPromptFromStdin(t *testing.T) {
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"echo": true}}}}})
	stdout, stderr, code := runZot(t, "what is in here?\n", nil, "-p", "-", "--provider", "scripted", "--cwd", t.TempDir(), "--script", s)
	if code != 0 || stdout != "You said: what is in here?\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestPrintSeparatesMessages: the texts of the assistant messages of one
// answer (before and after a tool call) are paragraphs of their own, not
// glued together, on the built-in script a newcomer runs first.
func TestPrintSeparatesMessages(t *testing.T) {
	stdout, stderr, code := runZot(t, "", nil, "-p", "hello", "--provider", "scripted", "--cwd", t.TempDir())
	if code != 0 || !strings.Contains(stdout, "a tool call at work.\n\nThe bash tool ran: ") || !strings.HasSuffix(stdout, "back to me.\n") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// A text that ends with its own newline gets one more, never two;
	// a message without text adds nothing.
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{
		map[string]any{"text": "first\n", "tool_calls": []any{map[string]any{"name": "ls", "args": map[string]any{}}}},
		map[string]any{"tool_calls": []any{map[string]any{"name": "ls", "args": map[string]any{}}}},
		map[string]any{"text": "second"},
	}}}})
	stdout, stderr, code = runZot(t, "", nil, "-p", "hi", "--provider", "scripted", "--cwd", t.TempDir(), "--script", s)
	if code != 0 || stdout != "first\n\nsecond\n" {
		t.Errorf("exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, "first\n\nsecond\n")
	}
}

// TestPromptHelp: -p --help (or -h) shows help; it is not a prompt.
func TestPromptHelp(t *testing.T) {
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"text": "A PROMPT RAN"}}}}})
	for _, h := range []string{"--help", "-h"} {
		stdout, stderr, code := runZot(t, "", nil, "-p", h, "--provider", "scripted", "--cwd", t.TempDir(), "--script", s)
		if code != 0 || !strings.Contains(stdout, "USAGE:") || strings.Contains(stdout, "A PROMPT RAN") || stderr != "" {
			t.Errorf("-p %s: exit %d, stderr %q, stdout:\n%s", h, code, stderr, stdout)
		}
	}
}

// TestAppendSystemPromptRepeats: every --append-system-prompt is kept, a
// blank line between two, and a comma is text, not a separator. The
// scripted provider counts a token per four bytes of the request, system
// prompt included, so equal prompts cost equal input tokens.
func TestAppendSystemPromptRepeats(t *testing.T) {
	dir := t.TempDir()
	s := script(t, map[string]any{"turns": []any{map[string]any{"steps": []any{map[string]any{"text": "ok"}}}}})
	input := func(extra ...string) int64 {
		t.Helper()
		args := append([]string{"-p", "hi", "--json", "--provider", "scripted", "--cwd", dir, "--script", s, "--no-tools"}, extra...)
		stdout, stderr, code := runZot(t, "", nil, args...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", extra, code, stderr)
		}
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
			_, ev, err := wire.DecodeFrame([]byte(line))
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			if u, ok := ev.(*wire.UsageEvent); ok {
				return u.Input
			}
		}
		t.Fatalf("%q: no usage event:\n%s", extra, stdout)
		return 0
	}
	a, b := strings.Repeat("a", 400), strings.Repeat("b", 400)
	both := input("--append-system-prompt", a+"\n\n"+b)
	if got := input("--append-system-prompt", a, "--append-system-prompt", b); got != both {
		t.Errorf("two flags: %d input tokens; one flag holding both texts: %d", got, both)
	}
	if only := input("--append-system-prompt", b); only >= both {
		t.Errorf("one text costs %d, both %d: the test cannot tell them apart", only, both)
	}
	commas, semicolons := input("--append-system-prompt", strings.Repeat("x,", 200)), input("--append-system-prompt", strings.Repeat("x;", 200))
	if commas != semicolons {
		t.Errorf("a text with commas costs %d input tokens, the same length without %d: commas split it", commas, semicolons)
	}
}

// TestNoSession: --no-session is accepted (the transcript stays in
// memory, as without it) and contradicts --session and --continue.
func TestNoSession(t *testing.T) {
	home := t.TempDir()
	env := []string{"ZOT_HOME=" + home}
	if _, stderr, code := runZot(t, "", env, "-p", "hi", "--no-session", "--provider", "scripted", "--cwd", t.TempDir()); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	entries, _ := os.ReadDir(home)
	if len(entries) != 0 {
		t.Errorf("--no-session wrote into the zot home: %v", entries)
	}
	for _, other := range [][]string{{"--session", filepath.Join(t.TempDir(), "s.jsonl")}, {"--continue"}} {
		args := append([]string{"rpc", "--provider", "scripted", "--no-session"}, other...)
		if stdout, stderr, code := runZot(t, "", env, args...); code != 2 || stdout != "" || !strings.Contains(stderr, "--no-session contradicts") {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// TestOneErrorPrefix: every error line starts with "zot: " exactly once,
// whatever package the error came from.
func TestOneErrorPrefix(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"-p", "", "--provider", "scripted", "--cwd", dir},
		{"-p", "hi", "--provider", "anthropic", "--cwd", dir},
		{"-p", "hi", "--provider", "nope"},
		{"-p", "hi", "--provider", "scripted", "--cwd", filepath.Join(dir, "missing")},
		{"-p", "hi", "--provider", "scripted", "--script", filepath.Join(dir, "missing.json")},
		{"-p", "hi", "--provider", "scripted", "--models-file", filepath.Join(dir, "missing.json")},
		{"models", "--models-file", filepath.Join(dir, "missing.json")},
		{"--bogus"},
	} {
		_, stderr, code := runZot(t, "", nil, args...)
		if code == 0 || !strings.HasPrefix(stderr, "zot: ") || strings.Contains(stderr, "zot: zot:") {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// TestModels: zot models lists the catalog without a key: a table for
// people, the get_models data with --json.
func TestModels(t *testing.T) {
	stdout, stderr, code := runZot(t, "", nil, "models")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if !strings.HasPrefix(lines[0], "PROVIDER") || !strings.Contains(lines[0], "MODEL") {
		t.Errorf("no header: %q", lines[0])
	}
	host := engine.NewHost(engine.HostConfig{})
	defer host.Close()
	rows := 0
	for _, name := range registry.Names() {
		for _, m := range host.Models(name) {
			rows++
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` +` + regexp.QuoteMeta(m.ID) + `\b`).MatchString(stdout) {
				t.Errorf("no row for %s %s", name, m.ID)
			}
		}
	}
	if len(lines) != rows+1 {
		t.Errorf("%d lines for %d models:\n%s", len(lines), rows, stdout)
	}
	for _, args := range [][]string{{"models", "--provider", "anthropic", "--json"}, {"--json", "models", "--provider", "anthropic"}, {"--provider", "anthropic", "models", "--json"}} {
		stdout, stderr, code := runZot(t, "", nil, args...)
		if code != 0 {
			t.Fatalf("%q: exit %d, stderr %q", args, code, stderr)
		}
		if err := schemacheck.ValidateDef("ModelsResult", []byte(stdout)); err != nil {
			t.Errorf("%q: %v\n%s", args, err, stdout)
		}
		var got wire.ModelsResult
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatal(err)
		}
		if want := host.Models("anthropic"); !reflect.DeepEqual(got.Models, want) {
			t.Errorf("%q: models\n%+v\nwant\n%+v", args, got.Models, want)
		}
	}
	if stdout, stderr, code := runZot(t, "", nil, "models", "--provider", "nope"); code != 2 || stdout != "" || !strings.Contains(stderr, strings.Join(registry.Names(), ", ")) ||
		!strings.Contains(stderr, "--provider openai --base-url") {
		t.Errorf("unknown provider: exit %d, stderr %q", code, stderr)
	}
	// A model without known prices says so, rather than showing $0.
	stdout, _, code = runZot(t, "", nil, "models", "--provider", "kimi")
	if code != 0 || !regexp.MustCompile(`(?m)^kimi +kimi-for-coding \* +262144 +32000 +yes +unknown$`).MatchString(stdout) {
		t.Errorf("kimi: exit %d\n%s", code, stdout)
	}
}

// versionRE matches a semantic version without its v.
var versionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// TestVersion: zot version and zot --version print the version, the
// protocol version and the commit; --json gives them to programs, and
// hello reports the same version.
func TestVersion(t *testing.T) {
	plain, stderr, code := runZot(t, "", nil, "version")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if flag, _, _ := runZot(t, "", nil, "--version"); flag != plain {
		t.Errorf("--version prints\n%s\nzot version prints\n%s", flag, plain)
	}
	var version, commit string
	var protocol int
	if n, err := fmt.Sscanf(plain, "zot version %s\nprotocol version %d\ncommit %s\n", &version, &protocol, &commit); n != 3 || err != nil {
		t.Fatalf("zot version: %v\n%s", err, plain)
	}
	if !versionRE.MatchString(version) || protocol != engine.ProtocolVersion || commit == "" {
		t.Errorf("version %q, protocol %d, commit %q", version, protocol, commit)
	}
	out, _, _ := runZot(t, "", nil, "version", "--json")
	var got struct {
		Version         string `json:"version"`
		ProtocolVersion int    `json:"protocol_version"`
		Commit          string `json:"commit"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.Version != version || got.ProtocolVersion != protocol || got.Commit != commit {
		t.Errorf("--json: %s (%v)", out, err)
	}
	p := start(t, nil, rpcArgs(t)...)
	p.send(`{"id":"1","type":"hello"}`)
	resp, _ := p.response()
	res, err := resp.Result()
	if err != nil {
		t.Fatal(err)
	}
	if h := res.(*wire.HelloResult); h.Version != version {
		t.Errorf("hello says version %q, zot version %q", h.Version, version)
	}
}

// TestHelp: zot --help lists the environment zot reads and has
// examples; it goes to stdout.
func TestHelp(t *testing.T) {
	stdout, stderr, code := runZot(t, "", nil, "--help")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if help, _, _ := runZot(t, "", nil, "help"); help != stdout {
		t.Errorf("zot help differs from zot --help:\n%s", help)
	}
	if rpc, stderr, code := runZot(t, "", nil, "help", "rpc"); code != 0 || stderr != "" || !strings.Contains(rpc, "zot rpc - ") {
		t.Errorf("zot help rpc: exit %d, stderr %q:\n%s", code, stderr, rpc)
	}
	for _, want := range []string{"EXAMPLES:", "zot -p", "zot rpc", "ENVIRONMENT:", "ANTHROPIC_API_KEY", "OPENAI_API_KEY",
		"GEMINI_API_KEY", "GOOGLE_API_KEY", "ZOTCORE_RPC_TOKEN", "ZOT_HOME", "XDG_STATE_HOME", "ZOT_SOCKET", "ZOT_VALIDATE", "OTEL_EXPORTER_OTLP_ENDPOINT", "--otel",
		"models", "version", "completion", "--append-system-prompt", "--no-session"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help does not mention %s", want)
		}
	}
}

// TestCompletion: zot completion prints a script for each shell, and the
// script's callback completes commands and flags.
func TestCompletion(t *testing.T) {
	for shell, want := range map[string]string{"bash": "complete -o", "zsh": "compdef", "fish": "complete -c zot", "pwsh": "Register-ArgumentCompleter"} {
		stdout, stderr, code := runZot(t, "", nil, "completion", shell)
		if code != 0 || stderr != "" || !strings.Contains(stdout, want) {
			t.Errorf("%s: exit %d, stderr %q, no %q in:\n%s", shell, code, stderr, want, stdout)
		}
	}
	stdout, _, _ := runZot(t, "", nil, "--generate-shell-completion")
	for _, want := range []string{"rpc", "models", "version"} {
		if !regexp.MustCompile(`(?m)^` + want + `\b`).MatchString(stdout) {
			t.Errorf("commands completed: no %s in\n%s", want, stdout)
		}
	}
	stdout, _, _ = runZot(t, "", nil, "rpc", "--prov", "--generate-shell-completion")
	if !strings.Contains(stdout, "--provider") {
		t.Errorf("flags of zot rpc completed: no --provider in\n%s", stdout)
	}
	if _, stderr, code := runZot(t, "", nil, "completion", "tcsh"); code != 2 || !strings.Contains(stderr, "bash, zsh, fish or pwsh") {
		t.Errorf("unknown shell: exit %d, stderr %q", code, stderr)
	}
}

// TestReasoningLevels: --reasoning takes the levels the vendors define; a
// word that is none of them is a usage error listing them, and a level
// the model does not take is refused with the levels it takes, before
// anything is sent. zot models --json lists each model's levels.
func TestReasoningLevels(t *testing.T) {
	dir := t.TempDir()
	_, stderr, code := runZot(t, "", nil, "-p", "hi", "--provider", "scripted", "--cwd", dir, "--reasoning", "extreme")
	if code != 2 || !strings.Contains(stderr, "none, minimal, low, medium, high, xhigh, max") {
		t.Errorf("unknown level: exit %d, stderr %q", code, stderr)
	}
	// The default OpenAI model refuses reasoning_effort "none"; no server
	// is reached (the base URL is not one).
	_, stderr, code = runZot(t, "", nil, "-p", "hi", "--provider", "openai", "--api-key", "k", "--base-url", "http://127.0.0.1:1/v1", "--cwd", dir, "--reasoning", "none")
	if code == 0 || !strings.Contains(stderr, `does not take reasoning level "none" (it takes low, medium, high, xhigh, max)`) {
		t.Errorf("level the model does not take: exit %d, stderr %q", code, stderr)
	}
	stdout, _, code := runZot(t, "", nil, "models", "--provider", "openai", "--json")
	var res wire.ModelsResult
	if code != 0 || json.Unmarshal([]byte(stdout), &res) != nil {
		t.Fatalf("models: exit %d", code)
	}
	for _, m := range res.Models {
		if m.ID == "gpt-5.6-sol" && fmt.Sprint(m.ReasoningLevels) != "[none low medium high xhigh max]" {
			t.Errorf("gpt-5.6-sol levels %v", m.ReasoningLevels)
		}
	}
}

// TestSetModelReasoning: set_model takes a reasoning level with the model
// (the schema's SetModelCommand.reasoning), refuses one the model does not
// take with the levels it does, goes back to the model's default with
// "default", and get_state says the level in use.
func TestSetModelReasoning(t *testing.T) {
	p := start(t, nil, "rpc", "--provider", "scripted", "--cwd", t.TempDir())
	p.send(`{"id":"1","type":"set_model","model":"scripted","reasoning":"high"}`)
	resp, _ := p.response()
	wantResponse(t, resp, "set_model", true, "")
	if res, err := resp.Result(); err != nil || res.(*wire.SetModelResult).Reasoning != "high" {
		t.Fatalf("set_model: %+v, %v", res, err)
	}
	p.send(`{"id":"2","type":"get_state"}`)
	resp, _ = p.response()
	if res, _ := resp.Result(); res.(*wire.StateResult).Reasoning != "high" {
		t.Errorf("get_state: %+v", res)
	}
	p.send(`{"id":"3","type":"set_model","model":"scripted","reasoning":"max"}`)
	resp, _ = p.response()
	wantResponse(t, resp, "set_model", false, wire.CodeInvalidParams)
	if !strings.Contains(resp.Error, "(it takes low, medium, high)") {
		t.Errorf("error %q", resp.Error)
	}
	p.send(`{"id":"4","type":"set_model","model":"scripted","reasoning":"default"}`)
	resp, _ = p.response()
	wantResponse(t, resp, "set_model", true, "")
	if res, _ := resp.Result(); res.(*wire.SetModelResult).Reasoning != "" {
		t.Errorf("default: %+v", res)
	}
}

package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"zot.dev/zot/internal/zotbin"
)

// TestHelpWithoutTemplates: zot is built with the Makefile's GO_TAGS,
// which leave text/template out of the binary (the CLI library then
// renders its default help layouts itself and refuses custom templates).
// Built that way and built plainly (as `go install` does), zot prints the
// same help for every command and the same completion scripts, and the
// tagged build links no text/template.
func TestHelpWithoutTemplates(t *testing.T) {
	if testing.Short() {
		t.Skip("builds zot twice")
	}
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^GO_TAGS\s*:=\s*(.*)$`).FindSubmatch(makefile)
	if m == nil || strings.TrimSpace(string(m[1])) != zotbin.Tags {
		t.Fatalf("the Makefile's GO_TAGS (%q) and zotbin.Tags (%q) differ", m, zotbin.Tags)
	}
	dir := t.TempDir()
	tagged, plain := filepath.Join(dir, "zot-tagged"), filepath.Join(dir, "zot-plain")
	for bin, args := range map[string][]string{tagged: {"-tags", zotbin.Tags}, plain: nil} {
		cmd := exec.Command("go", append(append([]string{"build"}, args...), "-o", bin, ".")...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %v: %v\n%s", args, err, out)
		}
	}

	f, err := elf.Open(tagged)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if strings.HasPrefix(s.Name, "text/template.") {
			t.Errorf("the tagged build links text/template (%s)", s.Name)
			break
		}
	}

	home := t.TempDir()
	run := func(bin string, args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(cleanEnv(), "ZOT_HOME="+home)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("zot %q: %v", args, err)
		}
		return string(out) + "\n[exit " + strconv.Itoa(code) + "]"
	}
	invocations := [][]string{
		{"--help"}, {"-h"}, {"help"}, {}, {"-p", "--help"}, {"--bogus"}, {"help", "bogus"}, {"bogus"},
		{"--generate-shell-completion"}, {"ext", "--generate-shell-completion"},
	}
	for _, shell := range []string{"bash", "zsh", "fish", "pwsh"} {
		invocations = append(invocations, []string{"completion", shell})
	}
	root := run(plain, "--help")
	commands := helpCommands(t, root)
	if len(commands) < 5 {
		t.Fatalf("found only the commands %q in zot --help:\n%s", commands, root)
	}
	for _, name := range commands {
		invocations = append(invocations, []string{name, "--help"}, []string{"help", name}, []string{name, "--bogus"})
		if name == "help" || name == "completion" {
			continue
		}
		for _, sub := range helpCommands(t, run(plain, name, "--help")) {
			invocations = append(invocations, []string{name, sub, "--help"}, []string{name, "help", sub})
		}
	}
	for _, args := range invocations {
		want, got := run(plain, args...), run(tagged, args...)
		if got != want {
			t.Errorf("zot %s: the tagged build prints\n%s\nthe plain build\n%s", strings.Join(args, " "), got, want)
		}
	}
	if !strings.Contains(root, "EXAMPLES:") || !strings.Contains(root, "ENVIRONMENT:") {
		t.Errorf("zot --help lacks its examples or environment:\n%s", root)
	}
}

// helpCommands returns the commands listed under COMMANDS: in help.
func helpCommands(t *testing.T, help string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(help, "\nCOMMANDS:\n")
	if !ok {
		return nil
	}
	var names []string
	for _, line := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(line, "   ") {
			break
		}
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		names = append(names, strings.TrimSuffix(name, ","))
	}
	return names
}

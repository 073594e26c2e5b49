package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

// cliOutcome is what one command line came to: the exit status, what was
// written, and what the command that ran was given (its arguments and
// every flag of its lineage, set or not, with its value).
type cliOutcome struct {
	code           int
	stdout, stderr string
	ran            string
}

// runCLI parses and runs args in-process with the tree newCLI builds for
// only ("" for every command), stdin empty.
func runCLI(t *testing.T, args []string, only string) cliOutcome {
	t.Helper()
	dir := t.TempDir()
	open := func(name string) *os.File {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	std := streams{in: open("in"), out: open("out"), err: open("err")}
	root := newCLI(std, args, only)
	var ran strings.Builder
	for _, c := range root.Commands {
		action := c.Action
		if action == nil {
			continue
		}
		c.Action = func(ctx context.Context, cmd *cli.Command) error {
			fmt.Fprintf(&ran, "%s %q\n", cmd.FullName(), cmd.Args().Slice())
			for _, l := range cmd.Lineage() {
				for _, f := range l.Flags {
					name := f.Names()[0]
					fmt.Fprintf(&ran, "%s --%s set=%v %v\n", l.Name, name, cmd.IsSet(name), cmd.Value(name))
				}
			}
			return action(ctx, cmd)
		}
	}
	code := report(root.Run(context.Background(), args), std.err)
	read := func(f *os.File) string {
		b, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return cliOutcome{code: code, stdout: read(std.out), stderr: read(std.err), ran: ran.String()}
}

// TestSpawnedCommandsParseAlike: a command line that starts with rpc or
// acp gets a root holding that command alone (spawnedCommand); it parses,
// runs, helps and fails exactly as it does in the whole tree.
func TestSpawnedCommandsParseAlike(t *testing.T) {
	t.Setenv("ZOT_HOME", t.TempDir())
	for _, k := range os.Environ() {
		if name, _, _ := strings.Cut(k, "="); strings.HasSuffix(name, "_API_KEY") || name == "ZOTCORE_RPC_TOKEN" {
			t.Setenv(name, "")
			os.Unsetenv(name)
		}
	}
	cwd := t.TempDir()
	lines := [][]string{
		{"rpc", "--provider", "scripted", "--cwd", cwd},
		{"rpc", "--provider=scripted", "--cwd=" + cwd, "--max-line-bytes", "2048", "--max-steps", "3"},
		{"rpc", "--provider", "scripted", "--cwd", cwd, "--append-system-prompt", "a", "--append-system-prompt", "b,c", "--tools", "read, bash", "--approve", "--approval-timeout", "2s"},
		{"rpc", "--provider", "scripted", "--cwd", cwd, "--no-tools", "--no-ext", "--permission", "deny", "--sandbox", "read-only"},
		{"rpc"},
		{"rpc", "--help"},
		{"rpc", "-h"},
		{"rpc", "help"},
		{"rpc", "extra"},
		{"rpc", "--", "extra"},
		{"rpc", "--bogus"},
		{"rpc", "-x"},
		{"rpc", "--max-line-bytes"},
		{"rpc", "--max-line-bytes", "many"},
		{"rpc", "--max-line-bytes", "12", "--provider", "scripted"},
		{"rpc", "--approval-timeout", "1s", "--provider", "scripted"},
		{"rpc", "--provider", "nope"},
		{"rpc", "--provider", "scripted", "--tools", "read,bogus"},
		{"rpc", "--json"},
		{"rpc", "-p", "hi"},
		{"rpc", "--rpc"},
		{"rpc", "--ephemeral"},
		{"rpc", "--version"},
		{"rpc", "--generate-shell-completion"},
		{"rpc", "--provider", "--generate-shell-completion"},
		{"acp", "--provider", "scripted"},
		{"acp", "--help"},
		{"acp", "extra"},
		{"acp", "--cwd", cwd},
		{"acp", "--max-line-bytes", "12"},
		{"acp", "--bogus"},
		{"acp", "--ephemeral"},
		{"acp", "--generate-shell-completion"},
	}
	for i, args := range lines {
		args = append([]string{"zot"}, args...)
		serves := i < 4 // the first lines are whole and serve until stdin ends
		t.Run(strings.Join(args[1:], " "), func(t *testing.T) {
			if only := spawnedCommand(args); only != args[1] {
				t.Fatalf("spawnedCommand(%q) = %q, want %q", args, only, args[1])
			}
			whole := runCLI(t, args, "")
			alone := runCLI(t, args, args[1])
			if serves && (whole.code != 0 || !strings.Contains(whole.ran, " --cwd set=true "+cwd+"\n")) {
				t.Errorf("did not serve with the flags given: %+v", whole)
			}
			if whole != alone {
				t.Errorf("with every command:\n%+v\nwith %s alone:\n%+v", whole, args[1], alone)
			}
		})
	}
	for _, args := range [][]string{{"zot"}, {"zot", "--provider", "scripted", "rpc"}, {"zot", "help", "rpc"}, {"zot", "daemon"}, {"zot", "-p", "rpc"}} {
		if only := spawnedCommand(args); only != "" {
			t.Errorf("spawnedCommand(%q) = %q, want the whole tree", args, only)
		}
	}
}

// TestSpawnedRPCHelp: `zot rpc --help`, which builds the rpc command
// alone, prints what `zot help rpc` prints from the whole tree.
func TestSpawnedRPCHelp(t *testing.T) {
	for _, name := range []string{"rpc", "acp"} {
		alone, _, code := runZot(t, "", nil, name, "--help")
		whole, _, code2 := runZot(t, "", nil, "help", name)
		if code != 0 || code2 != 0 || alone != whole {
			t.Errorf("zot %s --help (exit %d):\n%s\nzot help %s (exit %d):\n%s", name, code, alone, name, code2, whole)
		}
		if !slices.Contains(strings.Fields(alone), "zot") {
			t.Errorf("zot %s --help printed no usage:\n%s", name, alone)
		}
	}
}

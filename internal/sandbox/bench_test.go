package sandbox

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// benchPolicy is the policy of a bash call in auto mode: writes under the
// workspace and the temporary directory, no network.
func benchPolicy(b *testing.B) Policy {
	return Policy{Mode: WorkspaceWrite, Workspace: b.TempDir(), Writable: []string{os.TempDir()}}
}

// BenchmarkShell starts `sh -c "echo hi"` on a thread of its own that
// ends after, as bash's tool starts it, with no sandbox: what
// BenchmarkShellSandboxed adds to is this.
func BenchmarkShell(b *testing.B) {
	for b.Loop() {
		var out strings.Builder
		cmd := exec.Command("/bin/sh", "-c", "echo hi")
		cmd.Stdout = &out
		if err := startConfined(cmd, nil); err != nil {
			b.Fatal(err)
		}
		if err := cmd.Wait(); err != nil || out.String() != "hi\n" {
			b.Fatal(err, out.String())
		}
	}
}

// BenchmarkShellSandboxed starts the same shell confined (workspace-write,
// network off): the difference to BenchmarkShell is what the sandbox adds
// to a bash call.
func BenchmarkShellSandboxed(b *testing.B) {
	if Probe().Backend != BackendLandlock {
		b.Skipf("no Landlock here (%s)", Probe())
	}
	g := NewGuard(benchPolicy(b))
	for b.Loop() {
		var out strings.Builder
		prog, args, confine, err := g.Prepare("/bin/sh", []string{"-c", "echo hi"})
		if err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(prog, args...)
		cmd.Stdout = &out
		if err := startConfined(cmd, confine); err != nil {
			b.Fatal(err)
		}
		if err := cmd.Wait(); err != nil || out.String() != "hi\n" {
			b.Fatal(err, out.String())
		}
	}
}

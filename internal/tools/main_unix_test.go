//go:build unix

package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// The tests that must see a tool run as a user other than root re-execute
// the test binary: with helperEnv set, TestMain runs one tool call and
// prints its result instead of running the tests.
const (
	helperEnv     = "ZOT_TOOLS_TEST_HELPER" // the tool to run
	helperCWDEnv  = "ZOT_TOOLS_TEST_CWD"
	helperArgsEnv = "ZOT_TOOLS_TEST_ARGS" // the call's JSON arguments
)

// nobody is the user the helper runs as.
const nobody = 65534

// helperResult is what the helper prints on stdout.
type helperResult struct {
	Text    string `json:"text"`
	IsError bool   `json:"is_error"`
}

// helperBinDir holds a copy of the test binary that nobody can execute:
// go test builds it in a directory only its owner may enter.
var (
	helperBinOnce sync.Once
	helperBinDir  string
	helperBin     string
	helperBinErr  error
)

func TestMain(m *testing.M) {
	if name := os.Getenv(helperEnv); name != "" {
		os.Exit(runHelper(name))
	}
	code := m.Run()
	if helperBinDir != "" {
		os.RemoveAll(helperBinDir)
	}
	os.Exit(code)
}

// runHelper runs one call of the tool name and prints its result.
func runHelper(name string) int {
	for _, tl := range Builtins(Config{CWD: os.Getenv(helperCWDEnv), Env: []string{"PATH=/usr/bin:/bin"}}) {
		if tl.Name() != name {
			continue
		}
		res, err := tl.Run(context.Background(), Call{ID: "helper", Args: json.RawMessage(os.Getenv(helperArgsEnv))})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if err := json.NewEncoder(os.Stdout).Encode(helperResult{Text: textOf(res), IsError: res.IsError}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		return 0
	}
	fmt.Fprintf(os.Stderr, "no tool %q\n", name)
	return 2
}

// copyTestBinary copies the running test binary into a directory anyone
// may enter, once per run.
func copyTestBinary() (string, error) {
	helperBinOnce.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			helperBinErr = err
			return
		}
		if helperBinDir, err = os.MkdirTemp("", "zot-tools-helper-"); err != nil {
			helperBinErr = err
			return
		}
		if err := os.Chmod(helperBinDir, 0o755); err != nil {
			helperBinErr = err
			return
		}
		helperBin = filepath.Join(helperBinDir, "tools.test")
		helperBinErr = copyFile(exe, helperBin, 0o755)
	})
	return helperBin, helperBinErr
}

func copyFile(from, to string, mode os.FileMode) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// needRoot skips a test that needs to act as another user where the tests
// do not run as root. CI runs them as root, so there they always run.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("runs a tool as another user, which needs root")
	}
}

// sharedTempDir returns a new directory with mode perm whose parent others
// may enter, so that nobody reaches it.
func sharedTempDir(t *testing.T, perm os.FileMode) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, perm); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runAsNobody runs the tool name with args in cwd in a process whose user
// and group are nobody, and returns its result.
func runAsNobody(t *testing.T, cwd, name string, args map[string]any) Result {
	t.Helper()
	needRoot(t)
	bin, err := copyTestBinary()
	if err != nil {
		t.Fatalf("copying the test binary: %v", err)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin", "GORACE=atexit_sleep_ms=0", helperEnv + "=" + name, helperCWDEnv + "=" + cwd, helperArgsEnv + "=" + string(raw)}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("helper %s as nobody: %v\n%s", name, err, stderr)
	}
	var hr helperResult
	if err := json.Unmarshal(out, &hr); err != nil {
		t.Fatalf("helper output %q: %v", out, err)
	}
	if hr.IsError {
		return Errorf(hr.Text)
	}
	return Text(hr.Text)
}

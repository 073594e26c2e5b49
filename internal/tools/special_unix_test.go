//go:build unix

package tools

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hangBound is how long a test waits for a tool before calling it hung.
// Timing is not what these tests judge: the tools answer in milliseconds, and
// the bound only turns a hang into a failure instead of a stuck test binary.
const hangBound = 10 * time.Second

// runBounded runs tl under ctx and fails the test if it has not returned
// within hangBound.
func runBounded(t *testing.T, ctx context.Context, tl Tool, args map[string]any) Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		res Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := tl.Run(ctx, Call{ID: "call-1", Args: raw})
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatalf("%s.Run: unexpected error: %v", tl.Name(), o.err)
		}
		return o.res
	case <-time.After(hangBound):
		t.Fatalf("%s %s: no result within %v", tl.Name(), raw, hangBound)
		return Result{}
	}
}

// mkfifo makes the named pipe dir/name. When the test ends it opens the pipe
// for writing once, which releases a reader that a tool left blocked on it.
func mkfifo(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("named pipes unavailable:", err)
	}
	t.Cleanup(func() {
		if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	return p
}

// listenUnix makes a Unix socket file at dir/name.
func listenUnix(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Skip("unix sockets unavailable:", err)
	}
	t.Cleanup(func() { l.Close() })
	return p
}

// sparseFile makes dir/name: head, then a hole that makes the file size
// bytes long. Reading the hole costs time but no disk.
func sparseFile(t *testing.T, dir, name, head string, size int64) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, size); err != nil {
		t.Skip("sparse files unavailable:", err)
	}
	return p
}

// specialTree holds a text file, a named pipe, a link to it and a socket.
func specialTree(t *testing.T) string {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "needle\n"})
	mkfifo(t, dir, "pipe")
	if err := os.Symlink("pipe", filepath.Join(dir, "pipe-link")); err != nil {
		t.Fatal(err)
	}
	listenUnix(t, dir, "sock")
	return dir
}

func TestReadRefusesFilesThatAreNotRegular(t *testing.T) {
	dir := specialTree(t)
	rd := toolByName(t, Config{CWD: dir}, "read")
	for _, c := range []struct{ path, kind string }{
		{"pipe", "is a named pipe"},
		{"pipe-link", "is a named pipe"},
		{"sock", "is a socket"},
		{"/dev/null", "is a character device"},
	} {
		wantErr(t, runBounded(t, context.Background(), rd, map[string]any{"path": c.path}), c.path, c.kind, "not a regular file")
	}
}

func TestEditRefusesFilesThatAreNotRegular(t *testing.T) {
	dir := specialTree(t)
	ed := toolByName(t, Config{CWD: dir}, "edit")
	for _, c := range []struct{ path, kind string }{
		{"pipe", "is a named pipe"},
		{"pipe-link", "is a named pipe"},
		{"sock", "is a socket"},
		{"/dev/null", "is a character device"},
	} {
		wantErr(t, runBounded(t, context.Background(), ed, map[string]any{"path": c.path,
			"edits": []map[string]string{{"old_text": "a", "new_text": "b"}}}), c.path, c.kind, "not a regular file")
	}
}

func TestGrepSkipsFilesThatAreNotRegular(t *testing.T) {
	dir := specialTree(t)
	gr := toolByName(t, Config{CWD: dir}, "grep")
	if got := wantOK(t, runBounded(t, context.Background(), gr, map[string]any{"pattern": "needle"})); got != "a.txt:1:needle" {
		t.Errorf("grep: %q", got)
	}
	wantErr(t, runBounded(t, context.Background(), gr, map[string]any{"pattern": "x", "path": "pipe"}), "pipe", "is a named pipe")
	wantErr(t, runBounded(t, context.Background(), gr, map[string]any{"pattern": "x", "path": "sock"}), "sock", "is a socket")

	// A file that became a pipe after the walk saw a regular file: opening
	// it must not wait for a writer.
	g := &grepRun{cwd: dir, max: 10}
	done := make(chan error, 1)
	go func() { done <- g.searchFile(context.Background(), filepath.Join(dir, "pipe")) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("searchFile(pipe) = %v, want an error naming the pipe", err)
		}
	case <-time.After(hangBound):
		t.Fatal("searchFile blocked opening a named pipe")
	}
}

func TestFindAndLsNameFilesThatAreNotRegular(t *testing.T) {
	dir := specialTree(t)
	got := wantOK(t, runBounded(t, context.Background(), toolByName(t, Config{CWD: dir}, "find"), map[string]any{"pattern": "*"}))
	if want := "a.txt\npipe (named pipe)\npipe-link\nsock (socket)"; got != want {
		t.Errorf("find:\n%s\nwant:\n%s", got, want)
	}
	ls := toolByName(t, Config{CWD: dir}, "ls")
	got = wantOK(t, runBounded(t, context.Background(), ls, map[string]any{}))
	if want := "a.txt\npipe (named pipe)\npipe-link -> pipe\nsock (socket)"; got != want {
		t.Errorf("ls:\n%s\nwant:\n%s", got, want)
	}
	wantErr(t, runBounded(t, context.Background(), ls, map[string]any{"path": "pipe"}), "pipe", "is a named pipe", "not a directory")

	// A directory that became a pipe after it was listed, as ls and the
	// tree walker list it: opening it must not wait for a writer.
	done := make(chan error, 1)
	go func() {
		_, err := readDirSorted(filepath.Join(dir, "pipe"))
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "is a named pipe, not a directory") {
			t.Errorf("readDirSorted(pipe) = %v", err)
		}
	case <-time.After(hangBound):
		t.Fatal("readDirSorted blocked opening a named pipe")
	}
}

func TestIgnoreFilesThatAreNotRegularAreAbsent(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"a.log":              "needle\n",
		"sub/b.log":          "needle\n",
		"sub/.gitignore/x":   "*.log\n",
		"sub/deep/c.log":     "needle\n",
		".git/info/.keep":    "",
		"sub/deep/.keep.txt": "",
	})
	mkfifo(t, dir, ".gitignore")
	mkfifo(t, dir, ".git/info/exclude")
	mkfifo(t, dir, "sub/deep/.gitignore")
	gr := toolByName(t, Config{CWD: dir}, "grep")
	want := "a.log:1:needle\nsub/b.log:1:needle\nsub/deep/c.log:1:needle"
	if got := wantOK(t, runBounded(t, context.Background(), gr, map[string]any{"pattern": "needle"})); got != want {
		t.Errorf("grep:\n%s\nwant:\n%s", got, want)
	}
	// From below the top the ignore files above the search root are read
	// first.
	if got := wantOK(t, runBounded(t, context.Background(), gr, map[string]any{"pattern": "needle", "path": "sub/deep"})); got != "sub/deep/c.log:1:needle" {
		t.Errorf("grep sub/deep: %q", got)
	}
	got := wantOK(t, runBounded(t, context.Background(), toolByName(t, Config{CWD: dir}, "find"), map[string]any{"pattern": "*.log"}))
	if got != "a.log\nsub/b.log\nsub/deep/c.log" {
		t.Errorf("find: %q", got)
	}
}

func TestReadOfAHugeFileReadsOnlyWhatItShows(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	for i := 1; i <= 3000; i++ {
		sb.WriteString("line\n")
	}
	// 1 TiB: reading it all would take minutes.
	sparseFile(t, dir, "huge.log", sb.String(), 1<<40)
	rd := toolByName(t, Config{CWD: dir}, "read")
	got := wantOK(t, runBounded(t, context.Background(), rd, map[string]any{"path": "huge.log"}))
	if !strings.HasSuffix(got, "\n[showing lines 1-2000 of more than 3000; call read with offset=2001 to continue]\n") {
		t.Errorf("footer: %q", got[max(0, len(got)-120):])
	}
	got = wantOK(t, runBounded(t, context.Background(), rd, map[string]any{"path": "huge.log", "offset": 2990, "limit": 5}))
	if !strings.HasSuffix(got, "  2994\tline\n\n[showing lines 2990-2994 of more than 3000; call read with offset=2995 to continue]\n") {
		t.Errorf("paged: %q", got)
	}
}

func TestEditRefusesAHugeFile(t *testing.T) {
	dir := t.TempDir()
	sparseFile(t, dir, "huge.txt", "alpha\n", editMaxBytes+1)
	wantErr(t, runBounded(t, context.Background(), toolByName(t, Config{CWD: dir}, "edit"), map[string]any{"path": "huge.txt",
		"edits": []map[string]string{{"old_text": "alpha", "new_text": "beta"}}}), "huge.txt", "file too large for edit", "64.0 MiB")
}

// TestCancelStopsTheReadOfOneHugeLine cancels read and grep while they are
// inside a line a terabyte long; TestCancelStopsAnEndlessLine does the same
// without a scan limit.
func TestCancelStopsTheReadOfOneHugeLine(t *testing.T) {
	dir := t.TempDir()
	sparseFile(t, dir, "one-line.txt", strings.Repeat("x", 2*sniffLen), 1<<40)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"read", map[string]any{"path": "one-line.txt"}},
		{"read", map[string]any{"path": "one-line.txt", "offset": 2}},
		{"grep", map[string]any{"pattern": "needle"}},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		timer := time.AfterFunc(20*time.Millisecond, cancel)
		start := time.Now()
		res := runBounded(t, ctx, toolByName(t, Config{CWD: dir}, c.tool), c.args)
		timer.Stop()
		cancel()
		// Cancelled, or stopped by the scan limit if that came first.
		got := textOf(res)
		if got != "aborted" && !strings.Contains(got, "read looks at most") && !strings.Contains(got, "searched only the first") {
			t.Errorf("%s %v: %.200q", c.tool, c.args, got)
		}
		t.Logf("%s %v: %v, %.80q", c.tool, c.args, time.Since(start), got)
	}
}

func TestProcFilesAreRead(t *testing.T) {
	const p = "/proc/self/status"
	if st, err := os.Stat(p); err != nil || st.Size() != 0 {
		t.Skip("no /proc with size-0 files")
	}
	got := wantOK(t, runBounded(t, context.Background(), toolByName(t, Config{CWD: "/"}, "read"), map[string]any{"path": p}))
	if !strings.Contains(got, "\tName:") {
		t.Errorf("read %s: %q", p, got)
	}
	got = wantOK(t, runBounded(t, context.Background(), toolByName(t, Config{CWD: "/"}, "grep"), map[string]any{"pattern": "^Name:", "path": p}))
	if !strings.HasPrefix(got, "proc/self/status:1:Name:") {
		t.Errorf("grep %s: %q", p, got)
	}
}

package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// endless is a stream of one byte that never ends, like /dev/zero or a
// /proc file that keeps producing.
type endless byte

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e)
	}
	return len(p), nil
}

// returnsAfterCancel runs f under a context cancelled shortly after f
// starts and fails the test if f is still running well after that.
func returnsAfterCancel(t *testing.T, what string, f func(ctx context.Context)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(ctx)
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: still running 10 s after its context was cancelled", what)
	}
}

// TestCancelStopsAnEndlessLine cancels read and grep inside one line that
// never ends, with no size cap to stop them first: only the context can.
func TestCancelStopsAnEndlessLine(t *testing.T) {
	rd := &readTool{cfg: Config{CWD: t.TempDir()}.withDefaults(), maxScan: 1 << 62}
	for _, offset := range []int{1, 2} {
		returnsAfterCancel(t, fmt.Sprintf("read offset=%d", offset), func(ctx context.Context) {
			res, err := rd.readFrom(ctx, endless('x'), "endless", 0, offset, 10)
			if err != nil || !res.IsError || textOf(res) != "aborted" {
				t.Errorf("read offset=%d: %v, %q", offset, err, textOf(res))
			}
		})
	}
	returnsAfterCancel(t, "grep", func(ctx context.Context) {
		g := &grepRun{re: regexp.MustCompile("needle"), max: 10, maxScan: 1 << 62}
		if err := g.search(ctx, endless('x'), "endless"); !errors.Is(err, context.Canceled) {
			t.Errorf("grep: %v", err)
		}
	})
	returnsAfterCancel(t, "readAllCapped", func(ctx context.Context) {
		if _, err := readAllCapped(ctx, endless('x'), 0, editMaxBytes); !errors.Is(err, context.Canceled) && !errors.Is(err, errCapped) {
			t.Errorf("readAllCapped: %v", err)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := readAllCapped(ctx, endless('x'), 0, editMaxBytes); !errors.Is(err, context.Canceled) {
		t.Errorf("readAllCapped after cancel: %v", err)
	}
}

func TestReadStopsAtTheScanLimit(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&sb, "line %14d\n", i) // 20 bytes
	}
	writeFiles(t, dir, map[string]string{"f.txt": sb.String()})
	rd := &readTool{cfg: Config{CWD: dir}.withDefaults(), maxScan: 1000}
	got := wantOK(t, runTool(t, rd, map[string]any{"path": "f.txt", "offset": 49}))
	want := "    49\tline             49\n" +
		"    50\tline             50\n" +
		"    51\tl … [line truncated: more than 1 bytes]\n" +
		"\n[showing lines 49-51; the file goes on, but read looks at most 1000 B into a file; use bash (tail, sed) for the rest]\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	wantErr(t, runTool(t, rd, map[string]any{"path": "f.txt", "offset": 60}), "offset 60 is past the first 1000 B of f.txt (50 lines)", "bash")
	// Within the limit nothing changes.
	got = wantOK(t, runTool(t, rd, map[string]any{"path": "f.txt", "limit": 2}))
	if !strings.HasSuffix(got, "\n[showing lines 1-2 of more than 50; call read with offset=3 to continue]\n") {
		t.Errorf("footer: %q", got)
	}
}

func TestGrepNotesFilesPastTheScanLimit(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	for i := 1; i <= 100; i++ {
		word := "hay"
		if i == 10 || i == 90 {
			word = "needle"
		}
		fmt.Fprintf(&sb, "%-19s\n", word)
	}
	writeFiles(t, dir, map[string]string{"big.txt": sb.String(), "small.txt": "needle\n"})
	gr := &grepTool{cfg: Config{CWD: dir}.withDefaults(), maxScan: 1000}
	got := wantOK(t, runTool(t, gr, map[string]any{"pattern": "needle"}))
	want := "big.txt:10:needle             \nsmall.txt:1:needle\n[searched only the first 1000 B of big.txt; use bash to search the rest]"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	got = wantOK(t, runTool(t, gr, map[string]any{"pattern": "absent", "path": "big.txt"}))
	if want := "no matches for \"absent\" in big.txt\n[searched only the first 1000 B of big.txt; use bash to search the rest]"; got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestEditLimitCountsBytesRead(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": strings.Repeat("a\n", 100)})
	ed := &editTool{cfg: Config{CWD: dir}.withDefaults(), maxBytes: 100}
	edits := []map[string]string{{"old_text": "x", "new_text": "y"}}
	wantErr(t, runTool(t, ed, map[string]any{"path": "f.txt", "edits": edits}), "file too large for edit (200 B, the limit is 100 B)")

	// A file of exactly the limit is read whole.
	for _, n := range []int{99, 100, 101} {
		data, err := readAllCapped(context.Background(), strings.NewReader(strings.Repeat("a", n)), int64(n), 100)
		if n <= 100 && (err != nil || len(data) != n) || n > 100 && !errors.Is(err, errCapped) {
			t.Errorf("readAllCapped of %d bytes, limit 100: %d bytes, %v", n, len(data), err)
		}
	}

	// /proc files stat as empty: the limit counts the bytes read.
	const proc = "/proc/self/status"
	if st, err := os.Stat(proc); err != nil || st.Size() != 0 {
		t.Skip("no /proc with size-0 files")
	}
	ed.maxBytes = 64
	wantErr(t, runTool(t, ed, map[string]any{"path": proc, "edits": edits}), "file too large for edit (more than 64 B, the limit is 64 B)")
}

func TestIgnoreFileIsReadUpToItsLimit(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, ".gitignore")
	var sb strings.Builder
	for sb.Len() < ignoreFileMaxBytes-100 {
		sb.WriteString("# padding comment line\n")
	}
	sb.WriteString("*.log\n")
	sb.WriteString(strings.Repeat("x", 200) + "\n*.txt\n")
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	content, ok := readIgnoreFile(p)
	rules := parseGitignore(content)
	if !ok || len(rules) != 1 || !rules[0].matches("a.log", false) {
		t.Errorf("ok %v, %d rules", ok, len(rules))
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub", ".gitignore"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, ok := readIgnoreFile(filepath.Join(dir, "sub", ".gitignore")); ok {
		t.Error("a directory named .gitignore was read as an ignore file")
	}
}

package tools

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/internal/llm"
)

func TestReadNumbersLinesAndPages(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "one\ntwo\r\nthree\nfour\nfive"})
	rd := toolByName(t, Config{CWD: dir}, "read")

	got := wantOK(t, runTool(t, rd, map[string]any{"path": "a.txt"}))
	want := "     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour\n     5\tfive\n"
	if got != want {
		t.Errorf("full read:\n%q\nwant\n%q", got, want)
	}

	got = wantOK(t, runTool(t, rd, map[string]any{"path": filepath.Join(dir, "a.txt"), "offset": 2, "limit": 2}))
	want = "     2\ttwo\n     3\tthree\n\n[showing lines 2-3 of 5; call read with offset=4 to continue]\n"
	if got != want {
		t.Errorf("paged read:\n%q\nwant\n%q", got, want)
	}

	got = wantOK(t, runTool(t, rd, map[string]any{"path": "a.txt", "offset": 5}))
	if got != "     5\tfive\n" {
		t.Errorf("last line: %q", got)
	}
	wantErr(t, runTool(t, rd, map[string]any{"path": "a.txt", "offset": 9}), "offset 9 is beyond the end", "5 lines")
	wantErr(t, runTool(t, rd, map[string]any{"path": "a.txt", "offset": 6}), "offset 6 is beyond the end", "5 lines")
}

func TestReadLargeFileNearTheEnd(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "big.log")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	const total = 50000
	for i := 1; i <= total; i++ {
		fmt.Fprintf(w, "line %d %s\n", i, strings.Repeat("x", 60))
		if i == 100 {
			// One line far longer than any buffer.
			fmt.Fprintf(w, "%s\n", strings.Repeat("y", 3<<20))
			i++
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	rd := toolByName(t, Config{CWD: dir}, "read")

	got := wantOK(t, runTool(t, rd, map[string]any{"path": "big.log", "offset": 49990, "limit": 5}))
	if !strings.HasPrefix(got, fmt.Sprintf("%6d\tline 49990 ", 49990)) {
		t.Errorf("first line: %q", got[:min(len(got), 80)])
	}
	if !strings.Contains(got, "[showing lines 49990-49994 of 50000; call read with offset=49995 to continue]") {
		t.Errorf("footer missing: %q", got[len(got)-120:])
	}
	got = wantOK(t, runTool(t, rd, map[string]any{"path": "big.log", "offset": 49999}))
	if strings.Contains(got, "showing lines") || !strings.Contains(got, " 50000\tline 50000 ") {
		t.Errorf("tail read: %q", got)
	}
	// The 3 MiB line is cut with a marker.
	got = wantOK(t, runTool(t, rd, map[string]any{"path": "big.log", "offset": 101, "limit": 1}))
	if !strings.Contains(got, "[line truncated: 3145728 bytes in full]") || len(got) > 3000 {
		t.Errorf("long line: %d bytes, %q", len(got), got[len(got)-200:])
	}
}

func TestReadOutputCapGivesContinuation(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	for i := 0; i < 400; i++ {
		sb.WriteString(strings.Repeat("z", 1000) + "\n")
	}
	writeFiles(t, dir, map[string]string{"wide.txt": sb.String()})
	got := wantOK(t, runTool(t, toolByName(t, Config{CWD: dir}, "read"), map[string]any{"path": "wide.txt"}))
	if len(got) > readOutputCap+200 {
		t.Errorf("output is %d bytes", len(got))
	}
	if !strings.Contains(got, "of 400; call read with offset=") {
		t.Errorf("no continuation footer: %q", got[len(got)-120:])
	}
}

func TestReadEmptyDirectoryBinaryMissing(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"empty.txt": "",
		"bin.dat":   "header\x00\x01\x02 more",
		"sub/x":     "x",
	})
	rd := toolByName(t, Config{CWD: dir}, "read")
	if got := wantOK(t, runTool(t, rd, map[string]any{"path": "empty.txt"})); !strings.Contains(got, "empty") {
		t.Errorf("empty file: %q", got)
	}
	wantErr(t, runTool(t, rd, map[string]any{"path": "bin.dat"}), "binary")
	wantErr(t, runTool(t, rd, map[string]any{"path": "sub"}), "directory", "ls")
	wantErr(t, runTool(t, rd, map[string]any{"path": "nope.txt"}), "nope.txt", "no such file")
}

// pngBytes is a valid 1x1 PNG.
var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89" +
	"\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82")

func TestReadImageBySniffing(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), pngBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	res := wantOKResult(t, runTool(t, toolByName(t, Config{CWD: dir}, "read"), map[string]any{"path": "notes.txt"}))
	var img *llm.ImageBlock
	for _, b := range res.Content {
		if ib, ok := b.(*llm.ImageBlock); ok {
			img = ib
		}
	}
	if img == nil || img.MIME != "image/png" || string(img.Data) != string(pngBytes) {
		t.Fatalf("image block = %+v", img)
	}

	// Over the cap: an error stating size and cap.
	big := append(append([]byte(nil), pngBytes...), make([]byte, 2000)...)
	if err := os.WriteFile(filepath.Join(dir, "big.png"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	rd := toolByName(t, Config{CWD: dir, MaxImageBytes: 1024}, "read")
	wantErr(t, runTool(t, rd, map[string]any{"path": "big.png"}), "image/png", "2070 bytes", "cap of 1.0 KiB (1024 bytes)")
}

func wantOKResult(t *testing.T, r Result) Result {
	t.Helper()
	wantOK(t, r)
	return r
}

func TestReadAborted(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a\nb\n"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	wantErr(t, runToolCtx(t, ctx, toolByName(t, Config{CWD: dir}, "read"), map[string]any{"path": "a.txt"}), "aborted")
}

func TestReadInvalidUTF8IsReplaced(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"latin1.txt": "caf\xe9\n"})
	got := wantOK(t, runTool(t, toolByName(t, Config{CWD: dir}, "read"), map[string]any{"path": "latin1.txt"}))
	if got != "     1\tcaf\uFFFD\n" {
		t.Errorf("got %q", got)
	}
}

// TestAppendNumberedAsFormatted holds the line writer of read to what
// fmt and formatLine make of the same line.
func TestAppendNumberedAsFormatted(t *testing.T) {
	long := strings.Repeat("é", readMaxLineRunes+3)
	for _, tc := range []struct {
		n       int
		ln      line
		partial bool
	}{
		{1, line{text: []byte("plain"), size: 5}, false},
		{42, line{text: []byte(""), size: 0}, false},
		{999999, line{text: []byte("six digits"), size: 10}, false},
		{1234567, line{text: []byte("seven digits"), size: 12}, false},
		{3, line{text: []byte("bad \xff utf-8"), size: 11}, false},
		{4, line{text: []byte(long), size: len(long)}, false},
		{5, line{text: []byte("kept part"), size: 100}, false},
		{6, line{text: []byte("partial"), size: 7}, true},
	} {
		want := fmt.Sprintf("%6d\t%s\n", tc.n, formatLine(tc.ln, tc.partial))
		if got := string(appendNumbered([]byte("x"), tc.n, tc.ln, tc.partial)); got != "x"+want {
			t.Errorf("line %d: got %q, want %q", tc.n, got, "x"+want)
		}
	}
}

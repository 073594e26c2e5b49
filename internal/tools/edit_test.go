package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestEditAppliesAndShowsDiff(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	writeFiles(t, dir, map[string]string{"f.txt": sb.String()})
	ed := toolByName(t, Config{CWD: dir}, "edit")
	got := wantOK(t, runTool(t, ed, map[string]any{"path": "f.txt", "edits": []map[string]string{
		{"old_text": "line 5\n", "new_text": "line five\nline 5.5\n"},
		{"old_text": "line 18", "new_text": "line eighteen"},
	}}))
	want := `applied 2 edits to f.txt (+3 -2 lines)
--- f.txt
+++ f.txt
@@ -2,7 +2,8 @@
 line 2
 line 3
 line 4
-line 5
+line five
+line 5.5
 line 6
 line 7
 line 8
@@ -15,6 +16,6 @@
 line 15
 line 16
 line 17
-line 18
+line eighteen
 line 19
 line 20
`
	if got != want {
		t.Errorf("result:\n%s\nwant:\n%s", got, want)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "f.txt"))
	if !strings.Contains(string(b), "line 4\nline five\nline 5.5\nline 6\n") || !strings.Contains(string(b), "line eighteen\n") {
		t.Errorf("file content:\n%s", b)
	}
}

func TestEditPreservesBOMAndCRLF(t *testing.T) {
	dir := t.TempDir()
	orig := utf8BOM + "alpha\r\nbeta\r\ngamma\r\n"
	p := filepath.Join(dir, "win.txt")
	if err := os.WriteFile(p, []byte(orig), 0o640); err != nil {
		t.Fatal(err)
	}
	ed := toolByName(t, Config{CWD: dir}, "edit")
	got := wantOK(t, runTool(t, ed, map[string]any{"path": "win.txt", "edits": []map[string]string{
		{"old_text": "beta\ngamma", "new_text": "BETA\nnew line\ngamma"},
	}}))
	if strings.Contains(got, "\r") {
		t.Errorf("diff holds CR: %q", got)
	}
	b, _ := os.ReadFile(p)
	want := utf8BOM + "alpha\r\nBETA\r\nnew line\r\ngamma\r\n"
	if string(b) != want {
		t.Errorf("content = %q, want %q", b, want)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v", st.Mode().Perm())
	}
	// An old text sent with CRLF matches too.
	wantOK(t, runTool(t, ed, map[string]any{"path": "win.txt", "edits": []map[string]string{
		{"old_text": "alpha\r\nBETA", "new_text": "alpha\r\nbeta"},
	}}))
	b, _ = os.ReadFile(p)
	if string(b) != utf8BOM+"alpha\r\nbeta\r\nnew line\r\ngamma\r\n" {
		t.Errorf("content = %q", b)
	}
}

func TestEditKeepsMixedLineEndingsOutsideTheEdit(t *testing.T) {
	content := []byte("a\r\nb\nc\r\nd\r\n")
	out, err := applyEdits(content, []textEdit{{old: "c", new: "C\nC2"}}, "f")
	if err != nil {
		t.Fatal(err)
	}
	if string(out.content) != "a\r\nb\nC\r\nC2\r\nd\r\n" {
		t.Errorf("content = %q", out.content)
	}
	// Replacing a whole CRLF line including its ending.
	out, err = applyEdits(content, []textEdit{{old: "a\n", new: ""}}, "f")
	if err != nil || string(out.content) != "b\nc\r\nd\r\n" {
		t.Errorf("content = %q, %v", out.content, err)
	}
}

func TestEditMatchErrors(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.go": "x := 1\ny := 2\nx := 1\nfunc main() {\n\treturn\n}\n"})
	ed := toolByName(t, Config{CWD: dir}, "edit")
	edit := func(edits ...map[string]string) Result {
		return runTool(t, ed, map[string]any{"path": "f.go", "edits": edits})
	}
	wantErr(t, edit(map[string]string{"old_text": "y := 2", "new_text": "y := 3"},
		map[string]string{"old_text": "z := 9", "new_text": ""}),
		"edits[1].old_text", "matched 0 times", "f.go")
	wantErr(t, edit(map[string]string{"old_text": "x := 1", "new_text": "x := 2"}),
		"edits[0].old_text", "matched 2 times", "lines 1, 3")
	wantErr(t, edit(map[string]string{"old_text": "", "new_text": "a"}), "edits[0].old_text is empty")
	wantErr(t, edit(map[string]string{"old_text": "y := 2\nx", "new_text": "a"},
		map[string]string{"old_text": "x := 1\nfunc", "new_text": "b"}),
		"edits[0] and edits[1] overlap")
	wantErr(t, edit(map[string]string{"old_text": "y := 2", "new_text": "y := 2"}), "unchanged")
	wantErr(t, edit(map[string]string{"old_text": "func main() {\n    return", "new_text": "x"}),
		"matched 0 times", `first line "func main() {" occurs at line 4`)
	wantErr(t, edit(map[string]string{"old_text": "y", "new_text": "z", "oldText": "y"}), "both")
	wantErr(t, runTool(t, ed, map[string]any{"path": "missing.go", "edits": []map[string]string{{"old_text": "a", "new_text": "b"}}}),
		"missing.go", "no such file", "write")
	if b, _ := os.ReadFile(filepath.Join(dir, "f.go")); !strings.HasPrefix(string(b), "x := 1\ny := 2\n") {
		t.Errorf("failed edits changed the file: %q", b)
	}
}

func TestEditOverlappingSelfMatchCountsTwice(t *testing.T) {
	if _, err := applyEdits([]byte("aaa"), []textEdit{{old: "aa", new: "b"}}, "f"); err == nil ||
		!strings.Contains(err.Error(), "matched 2 times") {
		t.Errorf("err = %v", err)
	}
}

func TestEditCamelCaseAliases(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": "hello world\n"})
	ed := toolByName(t, Config{CWD: dir}, "edit")
	wantOK(t, runTool(t, ed, `{"path":"f.txt","edits":[{"oldText":"world","newText":"there"}]}`))
	if b, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(b) != "hello there\n" {
		t.Errorf("content = %q", b)
	}
}

func TestEditNoNewlineAtEnd(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": "a\nb"})
	got := wantOK(t, runTool(t, toolByName(t, Config{CWD: dir}, "edit"),
		map[string]any{"path": "f.txt", "edits": []map[string]string{{"old_text": "b", "new_text": "b\n"}}}))
	want := "applied 1 edit to f.txt (+1 -1 lines)\n--- f.txt\n+++ f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
	if got != want {
		t.Errorf("got:\n%q\nwant:\n%q", got, want)
	}
}

// TestEditLargeFileMemory edits a 20,000-line file in two far-apart places
// and bounds the memory the call allocates: a quadratic diff would need
// gigabytes.
func TestEditLargeFileMemory(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&sb, "this is line number %d of a large file\n", i)
	}
	writeFiles(t, dir, map[string]string{"big.txt": sb.String()})
	ed := toolByName(t, Config{CWD: dir}, "edit")
	args := map[string]any{"path": "big.txt", "edits": []map[string]string{
		{"old_text": "line number 10 of", "new_text": "line number ten of"},
		{"old_text": "line number 19990 of", "new_text": "line number 19990 (edited) of"},
	}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got := wantOK(t, runTool(t, ed, args))
	runtime.ReadMemStats(&after)
	if !strings.Contains(got, "+line number ten of") && !strings.Contains(got, "+this is line number ten of") {
		t.Errorf("diff lacks the change: %s", got)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("edit allocated %d MiB", alloc>>20)
	}

	// Rewriting every tenth line forces a real diff with many changes.
	var edits []map[string]string
	for i := 5; i < 20000; i += 100 {
		edits = append(edits, map[string]string{
			"old_text": fmt.Sprintf("line number %d of", i),
			"new_text": fmt.Sprintf("line number %d (changed) of", i),
		})
	}
	runtime.GC()
	runtime.ReadMemStats(&before)
	got = wantOK(t, runTool(t, ed, map[string]any{"path": "big.txt", "edits": edits}))
	runtime.ReadMemStats(&after)
	if !strings.HasPrefix(got, "applied 200 edits to big.txt (+200 -200 lines)") {
		t.Errorf("summary: %s", got[:100])
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("edit allocated %d MiB", alloc>>20)
	}
}

func TestUnifiedDiffTruncatesHugeDiffs(t *testing.T) {
	var a, b []string
	for i := 0; i < 3000; i++ {
		a = append(a, fmt.Sprintf("old %d\n", i))
		b = append(b, fmt.Sprintf("new %d\n", i))
	}
	text, added, removed := unifiedDiff("f", a, b, 3)
	if added != 3000 || removed != 3000 {
		t.Errorf("added %d removed %d", added, removed)
	}
	if !strings.Contains(text, "[diff truncated: ") || strings.Count(text, "\n") > diffMaxLines+5 {
		t.Errorf("diff not truncated: %d lines", strings.Count(text, "\n"))
	}
}

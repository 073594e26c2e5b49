package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkEdit measures one edit in the middle of files of growing size;
// time and memory per op should grow linearly with the line count.
func BenchmarkEdit(b *testing.B) {
	for _, lines := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("lines=%d", lines), func(b *testing.B) {
			dir := b.TempDir()
			path := filepath.Join(dir, "big.go")
			var sb strings.Builder
			for i := range lines {
				fmt.Fprintf(&sb, "\tx%d := compute(%d) // line %d\n", i, i, i)
			}
			content := sb.String()
			var edit Tool
			for _, t := range Builtins(Config{CWD: dir}) {
				if t.Name() == "edit" {
					edit = t
				}
			}
			mid := lines / 2
			args, _ := json.Marshal(map[string]any{"path": "big.go", "edits": []map[string]string{
				{"old_text": fmt.Sprintf("compute(%d) // line %d\n", mid, mid), "new_text": fmt.Sprintf("compute(%d) // changed\n", mid)},
			}})
			b.SetBytes(int64(len(content)))
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				res, err := edit.Run(context.Background(), Call{ID: "e", Args: args})
				if err != nil || res.IsError {
					b.Fatalf("edit failed: %v %+v", err, res)
				}
			}
		})
	}
}

package mcphost

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestJSONLinesSkipsWhatIsNotJSONRPC(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":2,"result":{"text":"` + strings.Repeat("x", 200<<10) + `"}}` + "\n"
	in := "banner line\n" +
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" +
		"\n  \t\n" +
		"INFO " + strings.Repeat("y", 100<<10) + "\n" +
		big +
		`  [{"jsonrpc":"2.0","method":"m"}]` + "\r\n" +
		"trailing text without newline"
	var skipped bytes.Buffer
	j := newJSONLines(io.NopCloser(iotest.HalfReader(strings.NewReader(in))), &skipped)
	got, err := io.ReadAll(iotest.OneByteReader(io.MultiReader(j)))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + "\n  \t\n" + big + `  [{"jsonrpc":"2.0","method":"m"}]` + "\r\n"
	if string(got) != want {
		t.Fatalf("passed on %d bytes, want %d: %.200q", len(got), len(want), got)
	}
	lines := strings.Split(strings.TrimSpace(skipped.String()), "\n")
	if len(lines) != 3 || !strings.HasSuffix(lines[0], ": banner line") || !strings.Contains(lines[1], "INFO yyy") ||
		len(lines[1]) > skippedShown+100 || !strings.HasSuffix(lines[2], "trailing text without newline") {
		t.Fatalf("skipped:\n%s", skipped.String())
	}
}

package sessionfile

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to Load as a session file. Load must
// never panic. What it accepts must hold together the way Open relies on:
// the part it left out as a torn last line holds no newline, and the part
// it kept, ended with a newline if it lacks one (as Open leaves the file),
// parses whole to the same transcript. (Open itself syncs the file it
// fixes, which is too slow to do for every input; the unit tests cover it.)
func FuzzLoad(f *testing.F) {
	var file bytes.Buffer
	file.WriteString(`{"session":{"version":1,"cwd":"/w","created":"2026-11-23T10:00:00Z"}}` + "\n")
	for _, m := range sample() {
		line, err := encodeMessage(m)
		if err != nil {
			f.Fatal(err)
		}
		file.Write(line)
		file.WriteByte('\n')
	}
	whole := file.Bytes()
	f.Add(whole)
	f.Add(whole[:len(whole)-1])                    // no newline after the last line
	f.Add(whole[:len(whole)-20])                   // a torn last line
	f.Add(append(whole, `{"reset":true}`+"\n"...)) // an older file's reset
	f.Add([]byte(`{"session":{"version":2}}` + "\n"))
	f.Add([]byte("\n\n  \n"))
	f.Add([]byte(`{"role":"assistant","content":[{"type":"tool_call","id":"c","name":"read","args":{}}]}` + "\n"))
	f.Add([]byte(`{"role":"user","content":[{"type":"image","data":"!!"}]}` + "\n"))
	f.Add([]byte(`{"role":"user","content":[{"type":"tool_result","content":[{"type":"nope"}]}]}`))
	path := filepath.Join(f.TempDir(), "s.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		loaded, err := Load(path)
		if err != nil {
			return
		}
		c, err := parse(path, data)
		if err != nil {
			t.Fatalf("Load read the file, parse refused it: %v", err)
		}
		if !reflect.DeepEqual(answerDangling(c.msgs), loaded) {
			t.Fatalf("parse read %#v, Load %#v", c.msgs, loaded)
		}
		if bytes.IndexByte(data[c.end:], '\n') >= 0 {
			t.Fatalf("the torn tail %q holds a newline", data[c.end:])
		}
		if c.end == 0 {
			if len(c.msgs) > 0 {
				t.Fatalf("%d messages from a file whose kept part is empty", len(c.msgs))
			}
			return
		}
		kept := data[:c.end:c.end]
		if kept[len(kept)-1] != '\n' {
			kept = append(kept, '\n')
		}
		again, err := parse(path, kept)
		if err != nil {
			t.Fatalf("the kept part %q does not parse: %v", kept, err)
		}
		if again.end != len(kept) || !reflect.DeepEqual(again.msgs, c.msgs) {
			t.Fatalf("the kept part %q parses to %#v (end %d of %d), the file to %#v", kept, again.msgs, again.end, len(kept), c.msgs)
		}
	})
}

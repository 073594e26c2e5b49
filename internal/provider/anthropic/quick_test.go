package anthropic

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Every text, thinking and input JSON delta of the recorded streams in
// testdata (the Messages API's own stream format) takes the quick road.
func TestQuickDeltaReadsTheRecordedStreams(t *testing.T) {
	files, err := filepath.Glob("testdata/*.sse")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded streams: %v", err)
	}
	quick := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			line, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
			if !ok || !bytes.Contains(line, []byte(`"content_block_delta"`)) {
				continue
			}
			var e streamEvent
			if err := json.Unmarshal(line, &e); err != nil || e.Delta == nil {
				continue // a broken event of a test of errors
			}
			index, kind, value, ok := quickDelta(line)
			switch e.Delta.Type {
			case "text_delta", "thinking_delta", "input_json_delta":
				if !ok {
					t.Errorf("%s: quickDelta declines %s", f, line)
					continue
				}
				quick++
				if want := deltaValue(&e); index != e.Index || kind != e.Delta.Type || value != want {
					t.Errorf("%s: quickDelta(%s) = %d %q %q, want %d %q %q", f, line, index, kind, value, e.Index, e.Delta.Type, want)
				}
			default:
				if ok {
					t.Errorf("%s: quickDelta reads a %s: %s", f, e.Delta.Type, line)
				}
			}
		}
	}
	if quick == 0 {
		t.Fatal("no delta of the recorded streams took the quick road")
	}
}

// deltaValue is the member of a decoded delta that quickDelta returns.
func deltaValue(e *streamEvent) string {
	switch e.Delta.Type {
	case "text_delta":
		return e.Delta.Text
	case "thinking_delta":
		return e.Delta.Thinking
	case "input_json_delta":
		return e.Delta.PartialJSON
	}
	return ""
}

func TestQuickDeltaDeclines(t *testing.T) {
	for _, in := range []string{
		`{"type":"content_block_delta","index":01,"delta":{"type":"text_delta","text":"x"}}`,
		`{"type":"content_block_delta","index":12345,"delta":{"type":"text_delta","text":"x"}}`,
		`{"type":"content_block_delta","index":-1,"delta":{"type":"text_delta","text":"x"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}} `,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x","more":1}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"},"index":1}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"s"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":null}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\ud83d"}}`,
		`{"type":"content_block_delta", "index":0,"delta":{"type":"text_delta","text":"x"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"`,
	} {
		if i, k, v, ok := quickDelta([]byte(in)); ok {
			t.Errorf("quickDelta(%s) = %d %q %q, want a decline", in, i, k, v)
		}
	}
}

// Whatever quickDelta reads, encoding/json reads the same from it.
func FuzzQuickDelta(f *testing.F) {
	for _, s := range []string{
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`,
		`{"type":"content_block_delta","index":3,"delta":{"type":"thinking_delta","thinking":"a \"b\" \u00e9"}}`,
		`{"type":"content_block_delta","index":12,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\ud83d\ude00"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		index, kind, value, ok := quickDelta(data)
		if !ok {
			return
		}
		var e streamEvent
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatalf("quickDelta read %q, encoding/json refuses it: %v", data, err)
		}
		if e.Type != "content_block_delta" || e.Delta == nil || e.Index != index || e.Delta.Type != kind || deltaValue(&e) != value {
			t.Fatalf("quickDelta(%q) = %d %q %q, encoding/json reads %+v", data, index, kind, value, e)
		}
	})
}

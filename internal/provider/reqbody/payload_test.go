package reqbody

import (
	"io"
	"testing"
	"testing/iotest"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/wirecodec"
)

// payloadOf builds a body of three texts spliced between raw bytes.
func payloadOf(texts ...string) (*Payload, string) {
	var s Splices
	var b []byte
	want := ""
	for _, text := range texts {
		b = append(b, `{"t":`...)
		want += `{"t":`
		b = append(s.AppendText(b, text), '}')
		want += string(wirecodec.AppendString(nil, text)) + "}"
	}
	return NewPayload(b, &s), want
}

// FuzzPayloadReader: reading a payload in chunks of any size (and texts
// encoded in chunks of any size of at least a UTF-8 sequence) gives the
// texts' encodings where they were spliced, and Len is its length.
func FuzzPayloadReader(f *testing.F) {
	f.Add("plain", "<&>\"\\\n\u2028é😀", "\xff\xed\xa0\x80\xe2\x80", uint8(4))
	f.Add("", "", "", uint8(7))
	f.Fuzz(func(t *testing.T, a, b, c string, chunk uint8) {
		old := textChunk
		textChunk = 4 + int(chunk)%64
		defer func() { textChunk = old }()
		p, want := payloadOf(a, b, c)
		if p.Len() != int64(len(want)) {
			t.Fatalf("Len = %d, want %d", p.Len(), len(want))
		}
		for _, r := range []io.Reader{p.Reader(), iotest.OneByteReader(p.Reader()), iotest.HalfReader(p.Reader())} {
			got, err := io.ReadAll(r)
			if err != nil || string(got) != want {
				t.Fatalf("read %q, %v; want %q", got, err, want)
			}
		}
		if got := string(p.Bytes()); got != want {
			t.Fatalf("Bytes = %q, want %q", got, want)
		}
	})
}

func TestPayloadWithoutSplices(t *testing.T) {
	p := NewPayload([]byte(`{"a":1}`), nil)
	got, err := io.ReadAll(p.Reader())
	if err != nil || string(got) != `{"a":1}` || p.Len() != 7 || string(p.Bytes()) != `{"a":1}` {
		t.Fatalf("got %q, %v, Len %d", got, err, p.Len())
	}
}

func TestAppendTextParts(t *testing.T) {
	m := &llm.Message{Role: llm.RoleUser, Content: []llm.Block{
		&llm.TextBlock{Text: "a\n"}, &llm.TextBlock{Text: ""}, &llm.TextBlock{Text: `"b"`},
	}}
	var s Splices
	b := append([]byte(nil), '[')
	b = append(s.AppendTextParts(b, m, `{"type":"text","text":`), ']')
	got, err := io.ReadAll(NewPayload(b, &s).Reader())
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"type":"text","text":"a\n"},{"type":"text","text":"\"b\""}]`
	if string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

package httpcall

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"zot.dev/zot/internal/llm"
)

// readAll collects every event of an SSE text, read through wrap.
func readAll(t *testing.T, input string, wrap func(io.Reader) io.Reader) ([]Event, error) {
	t.Helper()
	body := io.NopCloser(wrap(strings.NewReader(input)))
	s := newStream(context.Background(), func() {}, "test", body, 0)
	defer s.Close()
	var out []Event
	for {
		ev, err := s.Next()
		if err != nil {
			return out, err
		}
		out = append(out, Event{Name: ev.Name, Data: append([]byte(nil), ev.Data...)})
	}
}

func TestStreamParsing(t *testing.T) {
	type ev struct{ name, data string }
	tests := []struct {
		name  string
		input string
		want  []ev
	}{
		{"single data", "data: hello\n\n", []ev{{"message", "hello"}}},
		{"named event", "event: ping\ndata: {}\n\n", []ev{{"ping", "{}"}}},
		{"multi-line data joined with LF", "data: a\ndata: b\ndata:c\n\n", []ev{{"message", "a\nb\nc"}}},
		{"only one leading space stripped", "data:  two\n\n", []ev{{"message", " two"}}},
		{"no space after colon", "data:x\n\n", []ev{{"message", "x"}}},
		{"comments ignored", ": keep-alive\ndata: x\n: more\n\n", []ev{{"message", "x"}}},
		{"comment-only block dispatches nothing", ": hi\n\ndata: y\n\n", []ev{{"message", "y"}}},
		{"CRLF line ends", "event: e\r\ndata: x\r\n\r\n", []ev{{"e", "x"}}},
		{"CR line ends", "event: e\rdata: x\r\rdata: y\r\r", []ev{{"e", "x"}, {"message", "y"}}},
		{"mixed line ends", "data: a\r\ndata: b\rdata: c\n\n", []ev{{"message", "a\nb\nc"}}},
		{"id and retry ignored", "id: 7\nretry: 100\ndata: x\n\n", []ev{{"message", "x"}}},
		{"unknown field ignored", "foo: bar\ndata: x\n\n", []ev{{"message", "x"}}},
		{"field without colon", "data\n\n", []ev{{"message", ""}}},
		{"empty data field dispatches empty event", "data:\n\n", []ev{{"message", ""}}},
		{"two empty data lines", "data\ndata\n\n", []ev{{"message", "\n"}}},
		{"event without data is not dispatched", "event: lonely\n\ndata: x\n\n", []ev{{"message", "x"}}},
		{"event name resets after dispatch", "event: a\ndata: 1\n\ndata: 2\n\n", []ev{{"a", "1"}, {"message", "2"}}},
		{"last event name wins", "event: a\nevent: b\ndata: 1\n\n", []ev{{"b", "1"}}},
		{"BOM stripped", "\ufeffdata: x\n\n", []ev{{"message", "x"}}},
		{"BOM only at start", "data: \ufeffx\n\n", []ev{{"message", "\ufeffx"}}},
		{"unterminated last event discarded", "data: a\n\ndata: b\n", []ev{{"message", "a"}}},
		{"unterminated last line discarded", "data: a\n\ndata: b", []ev{{"message", "a"}}},
		{"several blank lines between events", "data: a\n\n\n\n\ndata: b\n\n", []ev{{"message", "a"}, {"message", "b"}}},
		{"colon in value kept", "data: {\"a\":\"b:c\"}\n\n", []ev{{"message", `{"a":"b:c"}`}}},
		{"empty stream", "", nil},
	}
	wraps := map[string]func(io.Reader) io.Reader{
		"whole":   func(r io.Reader) io.Reader { return r },
		"onebyte": iotest.OneByteReader,
		"half":    iotest.HalfReader,
	}
	for _, tt := range tests {
		for wname, wrap := range wraps {
			t.Run(tt.name+"/"+wname, func(t *testing.T) {
				got, err := readAll(t, tt.input, wrap)
				if !errors.Is(err, io.EOF) {
					t.Fatalf("err = %v, want io.EOF", err)
				}
				if len(got) != len(tt.want) {
					t.Fatalf("got %d events %q, want %d", len(got), got, len(tt.want))
				}
				for i, w := range tt.want {
					if got[i].Name != w.name || string(got[i].Data) != w.data {
						t.Errorf("event %d = {%q, %q}, want {%q, %q}", i, got[i].Name, got[i].Data, w.name, w.data)
					}
				}
			})
		}
	}
}

func TestStreamHugeLine(t *testing.T) {
	big := strings.Repeat("QUJD", 3<<20/4*3) // ~9 MiB of base64-like text
	input := "event: big\ndata: " + big + "\n\ndata: after\r\n\r\n"
	got, err := readAll(t, input, func(r io.Reader) io.Reader { return r })
	if !errors.Is(err, io.EOF) {
		t.Fatalf("err = %v", err)
	}
	if len(got) != 2 || got[0].Name != "big" || string(got[0].Data) != big || string(got[1].Data) != "after" {
		t.Fatalf("huge line not read intact: %d events", len(got))
	}
}

func TestStreamReadErrorIsStreamCut(t *testing.T) {
	boom := errors.New("connection reset")
	body := io.NopCloser(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom)))
	s := newStream(context.Background(), func() {}, "test", body, 0)
	defer s.Close()
	if ev, err := s.Next(); err != nil || string(ev.Data) != "a" {
		t.Fatalf("first event = %q, %v", ev.Data, err)
	}
	_, err := s.Next()
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != "stream_cut" || !le.Retryable || !errors.Is(err, boom) {
		t.Fatalf("err = %#v, want retryable stream_cut wrapping the read error", err)
	}
	if _, again := s.Next(); again != err {
		t.Fatalf("error not sticky: %v", again)
	}
}

func TestStreamNextAfterCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	body := io.NopCloser(strings.NewReader("data: a\n\ndata: b\n\n"))
	s := newStream(ctx, cancel, "test", body, 0)
	defer s.Close()
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := s.Next(); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestStreamCloseTwice(t *testing.T) {
	s := newStream(context.Background(), func() {}, "test", io.NopCloser(strings.NewReader("")), 0)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

package acpserver

import (
	"encoding/json"
	"testing"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/jsonrpc"
)

// paramsOf returns the params of a session/update frame, failing the
// test when the frame is not one.
func paramsOf(t testing.TB, frame []byte) json.RawMessage {
	t.Helper()
	var n struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(frame, &n); err != nil || n.JSONRPC != "2.0" || n.Method != acp.MethodSessionUpdate || n.Params == nil {
		t.Fatalf("not a session/update notification (%v): %s", err, frame)
	}
	return n.Params
}

// sameJSON reports whether a and b encode the same value.
func sameJSON(t testing.TB, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		t.Fatalf("not JSON: %s / %s", a, b)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

// The bytes written straight for a text chunk, held as text or as an
// update, are those encoding/json writes for the same update.
func TestFramesOfTextChunksMatchEncodingJSON(t *testing.T) {
	s := encodingSession("20261123T000000Z-0123456789abcdef")
	for _, text := range []string{"plain", "quote \" back\\slash \n\t tab", "<html> & \u2028 é 😀", "\x01\x1f", "\xff invalid", ""} {
		for _, thought := range []bool{false, true} {
			u := acp.SessionUpdate{AgentMessageChunk: textChunk(text)}
			if thought {
				u = acp.SessionUpdate{AgentThoughtChunk: textChunk(text)}
			}
			want, err := json.Marshal(acp.SessionNotification{SessionID: acp.SessionId(s.id), Update: u})
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range []item{{update: &u}, {text: text, thought: thought}} {
				frame, err := s.frame(&it)
				if err != nil {
					t.Fatal(err)
				}
				if !json.Valid(frame) {
					t.Fatalf("text %q: frame is not JSON: %q", text, frame)
				}
				if got := paramsOf(t, frame); !sameJSON(t, got, want) {
					t.Errorf("text %q (thought %v):\n got %s\nwant %s", text, thought, got, want)
				}
			}
		}
	}
	// A chunk with more than its text takes the general road.
	u := acp.SessionUpdate{AgentMessageChunk: &acp.ContentChunk{Content: acp.ContentBlock{Text: &acp.TextContent{Text: "x"}}, MessageID: "m1"}}
	frame, err := s.frame(&item{update: &u})
	if err != nil {
		t.Fatal(err)
	}
	var back acp.SessionNotification
	if err := json.Unmarshal(paramsOf(t, frame), &back); err != nil || back.Update.AgentMessageChunk.MessageID != "m1" {
		t.Errorf("messageId lost: %s %v", frame, err)
	}
	// A note is sent as its params.
	frame, err = s.frame(&item{note: map[string]string{"sessionId": s.id}})
	if err != nil || !sameJSON(t, paramsOf(t, frame), []byte(`{"sessionId":"`+s.id+`"}`)) {
		t.Errorf("note: %s %v", frame, err)
	}
}

func BenchmarkFrameTextChunk(b *testing.B) {
	s := encodingSession("20261123T000000Z-0123456789abcdef")
	it := item{text: "d00000000000042 "}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.frame(&it); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFrameTextChunkEncodingJSON(b *testing.B) {
	s := encodingSession("20261123T000000Z-0123456789abcdef")
	u := acp.SessionUpdate{AgentMessageChunk: textChunk("d00000000000042 ")}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(acp.SessionNotification{SessionID: acp.SessionId(s.id), Update: u}); err != nil {
			b.Fatal(err)
		}
	}
}

// encodingSession is a session with only what encoding its updates needs.
func encodingSession(id string) *acpSession {
	return &acpSession{id: id, textHeads: [2][]byte{textHead(id, false), textHead(id, true)}}
}

func TestUpdateHead(t *testing.T) {
	if want := string(jsonrpc.NotificationHead(acp.MethodSessionUpdate)); updateHead != want {
		t.Fatalf("updateHead = %s, want %s", updateHead, want)
	}
}

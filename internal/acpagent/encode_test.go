package acpagent

import (
	"encoding/json"
	"testing"

	"zot.dev/zot/internal/acp"
)

// The bytes written straight for a text chunk are those encoding/json
// writes for the same update.
func TestParamsOfTextChunksMatchEncodingJSON(t *testing.T) {
	s := &session{id: "20261123T000000Z-0123456789abcdef"}
	for _, text := range []string{"plain", "quote \" back\\slash \n\t tab", "<html> & \u2028 é 😀", "\x01\x1f", ""} {
		for _, u := range []acp.SessionUpdate{{AgentMessageChunk: textChunk(text)}, {AgentThoughtChunk: textChunk(text)}} {
			got, err := s.params(&item{update: &u})
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(acp.SessionNotification{SessionID: acp.SessionId(s.id), Update: u})
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil {
				t.Fatalf("not JSON: %s / %s", got, want)
			}
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			if string(gb) != string(wb) {
				t.Errorf("text %q:\n got %s\nwant %s", text, got, want)
			}
		}
	}
	// A chunk with more than its text takes the general road.
	u := acp.SessionUpdate{AgentMessageChunk: &acp.ContentChunk{Content: acp.ContentBlock{Text: &acp.TextContent{Text: "x"}}, MessageID: "m1"}}
	got, err := s.params(&item{update: &u})
	if err != nil || !json.Valid(got) || string(got) == "" {
		t.Fatalf("%s %v", got, err)
	}
	var back acp.SessionNotification
	if err := json.Unmarshal(got, &back); err != nil || back.Update.AgentMessageChunk.MessageID != "m1" {
		t.Errorf("messageId lost: %s %v", got, err)
	}
}

func BenchmarkParamsTextChunk(b *testing.B) {
	s := &session{id: "20261123T000000Z-0123456789abcdef"}
	u := acp.SessionUpdate{AgentMessageChunk: textChunk("d00000000000042 ")}
	it := item{update: &u}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.params(&it); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParamsTextChunkEncodingJSON(b *testing.B) {
	s := &session{id: "20261123T000000Z-0123456789abcdef"}
	u := acp.SessionUpdate{AgentMessageChunk: textChunk("d00000000000042 ")}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(acp.SessionNotification{SessionID: acp.SessionId(s.id), Update: u}); err != nil {
			b.Fatal(err)
		}
	}
}

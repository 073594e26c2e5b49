package acpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"zot.dev/zot/internal/acp"
	"zot.dev/zot/internal/jsonrpc"
	"zot.dev/zot/internal/wirecodec"
)

// chunkFrame is a text chunk's frame as zot's ACP server writes it
// (internal/acpserver/encode.go: the notification head, then the params
// with their members in this order).
func chunkFrame(session, kind, text string) []byte {
	b := jsonrpc.NotificationHead(acp.MethodSessionUpdate)
	b = append(b, `{"sessionId":`...)
	b = wirecodec.AppendString(b, session)
	b = append(b, `,"update":{"sessionUpdate":"`+kind+`","content":{"type":"text","text":`...)
	b = wirecodec.AppendString(b, text)
	return append(b, "}}}}"...)
}

// fullText decodes msg the generic way (the envelope, then the params
// into the generated types) and returns the text chunk it holds.
func fullText(t testing.TB, msg []byte) (Text, bool) {
	var env struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(msg, &env) != nil || env.Method != acp.MethodSessionUpdate {
		return Text{}, false
	}
	var n acp.SessionNotification
	if json.Unmarshal(env.Params, &n) != nil {
		return Text{}, false
	}
	switch u := n.Update; {
	case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
		return Text{SessionID: string(n.SessionID), Text: u.AgentMessageChunk.Content.Text.Text}, true
	case u.AgentThoughtChunk != nil && u.AgentThoughtChunk.Content.Text != nil:
		return Text{SessionID: string(n.SessionID), Text: u.AgentThoughtChunk.Content.Text.Text, Thought: true}, true
	}
	return Text{}, false
}

func TestTextChunkMatchesFullDecoding(t *testing.T) {
	if head := string(jsonrpc.NotificationHead(acp.MethodSessionUpdate)) + `{"sessionId":`; head != textFramePrefix {
		t.Fatalf("the frame's head is %s, the decoder expects %s", head, textFramePrefix)
	}
	texts := []string{"", "chunk12 ", "a \"quoted\" word\n", `back\slash`, "tab\tand\r\nCRLF", "é ü ✓ 🦀",
		"\x1b]0;title\x07", "\u2028\u2029", "<script>&amp;", "\x00\x7f\u0085"}
	for _, kind := range []string{"agent_message_chunk", "agent_thought_chunk"} {
		for _, text := range texts {
			msg := chunkFrame("sess-1", kind, text)
			got, ok := textChunk(msg)
			if !ok {
				t.Fatalf("%s %q: not decoded by hand: %s", kind, text, msg)
			}
			want, _ := fullText(t, msg)
			if got != want {
				t.Fatalf("%s %q: by hand %+v, in full %+v", kind, text, got, want)
			}
		}
	}
}

func TestTextChunkLeavesOtherShapes(t *testing.T) {
	good := string(chunkFrame("s", "agent_message_chunk", "hi"))
	for _, msg := range []string{
		// Other updates and methods.
		string(chunkFrame("s", "user_message_chunk", "hi")),
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi","_meta":{"zot":{"action":"display"}}}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"},"_meta":{"zot":{"action":"insert"}}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"image","text":"hi"}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`,
		// Another spelling: spaces, an extra member, a truncation.
		`{"jsonrpc": "2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`,
		good[:len(good)-1],
		good + " ",
		good[:len(good)-1] + `,"x":1}`,
		// Strings that are not JSON strings.
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a` + "\n" + `b"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\x"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + "\xff" + `"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi\"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":1,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`,
	} {
		if ev, ok := textChunk([]byte(msg)); ok {
			t.Errorf("decoded by hand as %+v, want it left to the full decoding: %s", ev, msg)
		}
	}
}

// FuzzTextChunk: whatever the decoder takes is valid JSON that the full
// decoding reads the same.
func FuzzTextChunk(f *testing.F) {
	f.Add(chunkFrame("s", "agent_message_chunk", "chunk12 "))
	f.Add(chunkFrame("s\"1", "agent_thought_chunk", "a\\b\u00e9\x1b"))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\ud83e\udd80 \ud800"}}}}`))
	f.Fuzz(func(t *testing.T, msg []byte) {
		got, ok := textChunk(msg)
		if !ok {
			return
		}
		if !json.Valid(msg) {
			t.Fatalf("took invalid JSON: %q", msg)
		}
		want, ok := fullText(t, msg)
		if !ok || got != want {
			t.Fatalf("by hand %+v, in full %+v (%v): %q", got, want, ok, msg)
		}
	})
}

// Over a connection, the text chunks and the other messages reach the
// client in the order the agent sent them.
func TestTextChunksInOrderWithTheRest(t *testing.T) {
	server, client := jsonrpc.NewPipe()
	var got []Event
	evs := make(chan Event, 64)
	c := New(client, func(ev Event) { evs <- ev })
	defer c.Close()
	srv := jsonrpc.NewConn(server, jsonrpc.Peer{Transport: "memory"}, jsonrpc.Static(jsonrpc.HandlerFunc(
		func(context.Context, *jsonrpc.Conn, *jsonrpc.Request) jsonrpc.Reply { return jsonrpc.Result(nil) })), jsonrpc.Options{})
	defer func() { _ = srv.Close(); _ = srv.Wait() }()
	ctx := context.Background()
	send := func(f []byte) {
		if err := srv.Send(ctx, jsonrpc.Frame(f)); err != nil {
			t.Fatal(err)
		}
	}
	send(chunkFrame("s", "agent_thought_chunk", "hmm"))
	send(chunkFrame("s", "agent_message_chunk", "one "))
	send([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"current_mode_update","currentModeId":"auto"}}}`))
	send(chunkFrame("s", "agent_message_chunk", "two"))
	send([]byte(`{"jsonrpc":"2.0","method":"_zot/notify","params":{"level":"info","message":"hello","source":"zot"}}`))
	send(chunkFrame("s", "agent_message_chunk", "three"))
	for len(got) < 6 {
		select {
		case ev := <-evs:
			got = append(got, ev)
		case <-time.After(10 * time.Second):
			t.Fatalf("%d events of 6: %+v", len(got), got)
		}
	}
	var kinds []string
	for _, ev := range got {
		switch e := ev.(type) {
		case Text:
			kinds = append(kinds, "text:"+e.Text)
		case Update:
			kinds = append(kinds, "mode:"+string(e.Update.CurrentModeUpdate.CurrentModeID))
		case Notice:
			kinds = append(kinds, "notice:"+e.Message)
		}
	}
	want := []string{"text:hmm", "text:one ", "mode:auto", "text:two", "notice:hello", "text:three"}
	if !slices.Equal(kinds, want) {
		t.Fatalf("events %q, want %q", kinds, want)
	}
	if !got[0].(Text).Thought || got[1].(Text).Thought {
		t.Fatalf("thought flags wrong: %+v", got[:2])
	}
}

// BenchmarkTextChunk is one streamed chunk decoded, by hand and the
// generic way.
func BenchmarkTextChunk(b *testing.B) {
	msg := chunkFrame("0b6c4a5e-2f7e-4b8e-9d1a-6c0c7a1e2f3d", "agent_message_chunk", "chunk12 ")
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := textChunk(msg); !ok {
				b.Fatal("not decoded")
			}
		}
	})
	b.Run("full", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := fullText(b, bytes.Clone(msg)); !ok {
				b.Fatal("not decoded")
			}
		}
	})
}

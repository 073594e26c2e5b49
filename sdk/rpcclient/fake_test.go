package rpcclient

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// fakeServer plays a zot from a newer protocol version: its prompt events
// include an unknown event type, a known event with an unknown field, one
// with an unknown content block, and a stdout line that is not JSON. In
// mode "exit" it answers a prompt, sends one text delta and exits 1.
func fakeServer(in io.Reader, out io.Writer, mode string) int {
	sc := bufio.NewScanner(in)
	w := bufio.NewWriter(out)
	for sc.Scan() {
		var cmd struct {
			ID   json.RawMessage `json:"id"`
			Type string          `json:"type"`
		}
		if err := json.Unmarshal(sc.Bytes(), &cmd); err != nil {
			return 3
		}
		id := string(cmd.ID)
		switch {
		case cmd.Type == "prompt" && mode == "exit":
			fmt.Fprintf(w, `{"type":"response","id":%s,"command":"prompt","success":true,"data":{"started":true}}`+"\n", id)
			fmt.Fprintf(w, `{"type":"text_delta","seq":1,"prompt_id":%s,"delta":"hi"}`+"\n", id)
			w.Flush()
			fmt.Fprintln(os.Stderr, "zot: the fake went away")
			return 1
		case cmd.Type == "prompt":
			fmt.Fprintf(w, `{"type":"response","id":%s,"command":"prompt","success":true,"data":{"started":true,"lane":"fast"}}`+"\n", id)
			fmt.Fprintf(w, `{"type":"future_event","seq":1,"prompt_id":%s,"payload":{"nested":[1,2]}}`+"\n", id)
			fmt.Fprintf(w, `{"type":"text_delta","seq":2,"prompt_id":%s,"delta":"hi","confidence":0.9}`+"\n", id)
			fmt.Fprintf(w, `{"type":"user_message","seq":3,"prompt_id":%s,"content":[{"type":"hologram","depth":3}],"time":"2026-11-23T10:00:00Z"}`+"\n", id)
			fmt.Fprint(w, "this is not json\r\n")
			fmt.Fprintf(w, `{"type":"done","seq":4,"prompt_id":%s}`+"\r\n", id)
		default:
			fmt.Fprintf(w, `{"type":"response","id":%s,"command":%q,"success":false,"error":"not in this fake","code":"unknown_command"}`+"\n", id, cmd.Type)
		}
		if err := w.Flush(); err != nil {
			return 3
		}
	}
	return 0
}

func TestNewerServerEventsPassThrough(t *testing.T) {
	var mu sync.Mutex
	var bad []string
	c, err := Start(context.Background(), Options{
		Bin: os.Args[0],
		Env: append(cleanEnv(), fakeEnv+"=1"),
		OnBadLine: func(line []byte, err error) {
			mu.Lock()
			defer mu.Unlock()
			bad = append(bad, string(line))
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.PromptStream(ctx(t), "hi", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Start.Started {
		t.Errorf("start %+v", s.Start)
	}
	evs := collect(t, s)
	if got := strings.Join(types(evs), " "); got != "future_event text_delta user_message done" {
		t.Fatalf("events %s", got)
	}
	future, ok := evs[0].(*wire.UnknownEvent)
	if !ok || future.Seq != 1 || future.PromptID != s.ID || !strings.Contains(string(future.Raw), `"payload":{"nested":[1,2]}`) {
		t.Errorf("unknown event %+v", evs[0])
	}
	var ut *wire.UnknownTypeError
	if !errors.As(future.Err, &ut) || ut.Type != "future_event" {
		t.Errorf("unknown event error %v", future.Err)
	}
	if d, ok := evs[1].(*wire.TextDeltaEvent); !ok || d.Delta != "hi" {
		t.Errorf("text delta with an extra field: %+v", evs[1])
	}
	um, ok := evs[2].(*wire.UnknownEvent)
	if !ok || um.TypeName != "user_message" || um.Err == nil || um.Type() != "user_message" {
		t.Errorf("user message with an unknown block: %+v", evs[2])
	}
	if out, _ := json.Marshal(evs[0]); string(out) != string(future.Raw) {
		t.Errorf("raw event marshals to %s", out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bad) != 1 || bad[0] != "this is not json" {
		t.Errorf("bad lines %q", bad)
	}
	err = c.Ping(ctx(t))
	wantCode(t, err, wire.CodeUnknownCommand, "ping")
}

//go:build unix

package bench

import (
	"context"
	"strings"
	"testing"
	"time"
)

// pingOK is the response a script gives to the harness's first command.
const pingOK = `{"type":"response","id":"b1","command":"ping","success":true,"data":{"pong":true}}`

// cannedChild starts a script that answers the ping, then writes lines for
// the prompt and waits for stdin to close.
func cannedChild(t *testing.T, lines ...string) *child {
	t.Helper()
	return cannedChildThen(t, "cat >/dev/null\n", lines...)
}

// cannedChildThen is cannedChild with the script's last command given.
func cannedChildThen(t *testing.T, last string, lines ...string) *child {
	t.Helper()
	var body strings.Builder
	body.WriteString("read l\necho '" + pingOK + "'\nread l\n")
	for _, l := range lines {
		body.WriteString("echo '" + l + "'\n")
	}
	body.WriteString(last)
	p := script(t, "canned", body.String())
	c, err := spawn(context.Background(), p, nil, t.TempDir(), nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.reap(10 * time.Second); err != nil {
			t.Errorf("reaping: %v", err)
		}
	})
	if err := c.ping(); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPromptCounts(t *testing.T) {
	c := cannedChild(t,
		`{"type":"response","id":"b2","command":"prompt","success":true,"data":{"started":true}}`,
		`{"type":"turn_start","step":1,"seq":1}`,
		`{"type":"text_delta","delta":"abc","seq":2}`,
		`{"type":"tool_call","id":"t1","name":"bash","args":{"command":"echo hi"}}`,
		`{"type":"tool_result","id":"t1","is_error":false,"content":[{"type":"text","text":"hi"}]}`,
		`{"type":"text_delta","delta":"de"}`,
		`{"type":"user_message","message":{"role":"user"}}`,
		`{"type":"turn_end","stop":"end_turn"}`,
		`{"type":"done"}`)
	res, err := c.prompt("x")
	if err != nil {
		t.Fatal(err)
	}
	if res.deltas != 2 || res.deltaBytes != 5 || res.toolCalls != 1 || res.toolResults != 1 || res.elapsed <= 0 {
		t.Errorf("result %+v", res)
	}
}

func TestPromptFailures(t *testing.T) {
	started := `{"type":"response","id":"b2","command":"prompt","success":true,"data":{"started":true}}`
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"error event", []string{started, `{"type":"error","message":"provider down"}`, `{"type":"done"}`}, "error event: provider down"},
		{"turn error", []string{started, `{"type":"turn_end","stop":"error"}`, `{"type":"done"}`}, `stop "error"`},
		{"refused", []string{`{"type":"response","id":"b2","command":"prompt","success":false,"error":"busy","code":"busy"}`}, "prompt refused: busy"},
		{"done first", []string{`{"type":"done"}`, started}, "done came before"},
		{"not json", []string{started, `Starting zot...`}, "not JSON"},
		{"no type", []string{started, `{"delta":"x"}`}, "has no type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cannedChild(t, tc.lines...)
			_, err := c.prompt("x")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestPromptProcessExits(t *testing.T) {
	c := cannedChildThen(t, "exit 0\n",
		`{"type":"response","id":"b2","command":"prompt","success":true,"data":{"started":true}}`,
		`{"type":"text_delta","delta":"abc"}`)
	if _, err := c.prompt("x"); err == nil || !strings.Contains(err.Error(), "the process closed stdout") {
		t.Errorf("got %v", err)
	}
}

func TestPromptTimeout(t *testing.T) {
	c := cannedChild(t)
	c.timeout = 200 * time.Millisecond
	if _, err := c.prompt("x"); err == nil || !strings.Contains(err.Error(), "no answer within 200ms") {
		t.Errorf("got %v", err)
	}
}

func TestContextCancelCutsARead(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := script(t, "mute", "cat >/dev/null\n")
	c, err := spawn(ctx, p, nil, t.TempDir(), nil, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer c.reap(10 * time.Second)
	time.AfterFunc(100*time.Millisecond, cancel)
	if err := c.ping(); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("got %v", err)
	}
}

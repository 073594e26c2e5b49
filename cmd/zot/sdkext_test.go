package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// An extension written with sdk/ext, through zot's host: a tool call the
// host gives up is cancelled at the extension with its reason, the three
// intercepts act, and a notice pushed from an event handler reaches the
// client.
func TestSDKExtensionThroughHost(t *testing.T) {
	folder := t.TempDir()
	bin := filepath.Join(folder, "sdkext")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/sdkext").CombinedOutput(); err != nil {
		t.Fatalf("building the test extension: %v\n%s", err, out)
	}
	writeExt(t, folder, `{"name":"sdkext","exec":"./sdkext"}`, nil)
	homeEnv, home := zotHomeEnv(t)
	s := script(t, map[string]any{"turns": []any{
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{
				map[string]any{"name": "sdk_slow", "args": map[string]any{}},
				map[string]any{"name": "bash", "args": map[string]any{"command": "echo hi"}},
			}},
			map[string]any{"text": "the SECRET is out"},
		}},
		map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{map[string]any{"name": "ls", "args": map[string]any{"path": "."}}}},
		}},
	}})
	p := start(t, []string{homeEnv}, rpcArgs(t, "--script", s, "--ext", folder)...)
	r, _ := p.call(`{"id":"1","type":"prompt","message":"go"}`)
	wantResponse(t, r, "prompt", true, "")
	evs := p.untilDone()
	results := toolResults(evs)
	if len(results) != 2 {
		t.Fatalf("tool results: %d", len(results))
	}
	if !results[0].IsError || !strings.Contains(resultText(results[0]), "gave no result for sdk_slow within 300ms") {
		t.Errorf("sdk_slow: %q", resultText(results[0]))
	}
	if !results[1].IsError || !strings.Contains(resultText(results[1]), "sdkext allows no bash") {
		t.Errorf("bash: %q", resultText(results[1]))
	}
	all := eventsJSON(t, evs)
	if !strings.Contains(all, "the [redacted] is out") {
		t.Errorf("the assistant text was not rewritten:\n%s", all)
	}

	r, _ = p.call(`{"id":"2","type":"prompt","message":"loop"}`)
	wantResponse(t, r, "prompt", true, "")
	if all = eventsJSON(t, p.untilDone()); !strings.Contains(all, "sdkext allows three steps") {
		t.Errorf("turn_start guard did not stop the fourth step:\n%s", all)
	}
	if ev := p.event("ext_notify", evs).(*wire.ExtNotifyEvent); ev.Extension != "sdkext" || !strings.HasPrefix(ev.Message, "turn ended: ") {
		t.Errorf("ext_notify: %+v", ev)
	}

	// Keys typed into a panel in a burst, sent without waiting for their
	// answers, are applied in the order sent: each redraw shows one more
	// character of the text.
	r, evs = p.call(`{"id":"3","type":"run_command","name":"sdk_type"}`)
	wantResponse(t, r, "run_command", true, "")
	p.event("panel_open", evs)
	text := "ordered keys: 0123456789 abcdefghijklmnopqrstuvwxyz"
	for i, c := range text {
		p.send(fmt.Sprintf(`{"id":"k%d","type":"panel_key","panel_id":"typing","key":"rune","text":%q}`, i, string(c)))
	}
	var drawn []string
	for answered := 0; answered < len(text) || len(drawn) < len(text); {
		f := p.next()
		if f.resp != nil {
			wantResponse(t, f.resp, "panel_key", true, "")
			answered++
		} else if pr, ok := f.ev.(*wire.PanelRenderEvent); ok {
			drawn = append(drawn, pr.Lines[0])
		}
	}
	for i, got := range drawn {
		if got != text[:i+1] {
			t.Fatalf("redraw %d shows %q, want %q: keys applied out of order", i, got, text[:i+1])
		}
	}

	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	log, _ := os.ReadFile(filepath.Join(home, "logs", "ext-sdkext.log"))
	if !strings.Contains(string(log), "sdk_slow cancelled: ext: the host cancelled the request: timeout") {
		t.Errorf("the extension's log does not show the cancel:\n%s", log)
	}
}

func eventsJSON(t *testing.T, evs []wire.Event) string {
	t.Helper()
	var b strings.Builder
	for _, ev := range evs {
		data, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.String()
}

package main

import (
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/sdk/wire"
)

// badAnswerExt is a hand-written extension (no SDK) that answers its
// command with an action the protocol does not have, and writes a line
// that is not JSON before its hello.
const badAnswerExt = `import json, sys
def send(f):
    sys.stdout.write(json.dumps(f) + "\n"); sys.stdout.flush()
send({"type": "hello", "name": "oddans"})
print("loading… 42% of the index, please wait while the caches warm up " + "x" * 400, flush=True)
send({"type": "register_command", "name": "odd", "description": "answers with an unknown action"})
send({"type": "ready"})
for line in sys.stdin:
    f = json.loads(line)
    if f["type"] == "command_invoked":
        send({"type": "command_response", "id": f["id"], "action": "frobnicate", "display": "never shown"})
    elif f["type"] == "shutdown":
        send({"type": "shutdown_ack"}); break
`

// A command answered with an action the protocol does not have fails
// run_command with a structured error naming the valid actions, not a
// silent noop; a stray line that is not JSON is reported as such, quoted
// and bounded.
func TestExtensionBadAnswers(t *testing.T) {
	needTools(t, "python3")
	dir := filepath.Join(t.TempDir(), "oddans")
	writeExt(t, dir, `{"name":"oddans","exec":"python3","args":["main.py"]}`, map[string]string{"main.py": badAnswerExt})
	homeEnv, _ := zotHomeEnv(t)
	p := start(t, []string{homeEnv}, rpcArgs(t, "--ext", dir)...)
	r, evs := p.call(`{"id":"1","type":"run_command","name":"odd","args":""}`)
	for _, ev := range evs {
		if _, ok := ev.(*wire.ExtDisplayEvent); ok {
			t.Errorf("the answer was shown: %v", ev)
		}
	}
	if r.Success || r.Code != wire.CodeExtensionError || !strings.Contains(r.Error, "frobnicate") || !strings.Contains(r.Error, "prompt, insert, display, open_panel, noop") {
		t.Errorf("run_command: %+v", r)
	}
	// It goes on serving.
	r, _ = p.call(`{"id":"2","type":"get_state"}`)
	wantResponse(t, r, "get_state", true, "")
	p.send(`{"id":"3","type":"shutdown"}`)
	p.exit()
	stderr := p.stderr.String()
	if !strings.Contains(stderr, "not a JSON frame") || !strings.Contains(stderr, `"loading… 42% of the index`) {
		t.Errorf("stderr:\n%s", stderr)
	}
	if strings.Contains(stderr, strings.Repeat("x", 300)) {
		t.Errorf("the stray line is not bounded:\n%s", stderr)
	}
}

package soak

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// scriptJSON returns a random script for the scripted provider: turns of
// one to three steps that stream text slowly, some calling bash (sleeps
// and ls) or the ls and read tools, so prompts last from milliseconds to
// about a second and aborts and signals land mid-stream and mid-tool.
func scriptJSON(r *rand.Rand) []byte {
	type call struct {
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	}
	type step struct {
		Thinking  string `json:"thinking,omitempty"`
		Text      string `json:"text,omitempty"`
		Chunk     int    `json:"chunk,omitempty"`
		DelayMS   int    `json:"delay_ms,omitempty"`
		ToolCalls []call `json:"tool_calls,omitempty"`
	}
	type turn struct {
		Steps []step `json:"steps"`
	}
	text := func() string {
		words := []string{"the", "soak", "keeps", "zot", "busy", "with", "slow", "words", "and", "tools", "ü", "✓"}
		n := 3 + r.IntN(60)
		var sb strings.Builder
		for i := range n {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(words[r.IntN(len(words))])
		}
		return sb.String()
	}
	tool := func() call {
		switch r.IntN(5) {
		case 0:
			return call{Name: "ls", Args: map[string]any{"path": "."}}
		case 1:
			return call{Name: "read", Args: map[string]any{"path": "notes.txt"}}
		case 2:
			return call{Name: "bash", Args: map[string]any{"command": "ls -la"}}
		default:
			return call{Name: "bash", Args: map[string]any{"command": fmt.Sprintf("sleep 0.%02d; ls", 5+r.IntN(45))}}
		}
	}
	var turns []turn
	for range 8 + r.IntN(8) {
		var t turn
		for s := range 1 + r.IntN(3) {
			st := step{Text: text(), Chunk: 4 + r.IntN(60), DelayMS: r.IntN(8)}
			if r.IntN(4) == 0 {
				st.Thinking = text()
			}
			if s < 2 && r.IntN(2) == 0 {
				for range 1 + r.IntN(2) {
					st.ToolCalls = append(st.ToolCalls, tool())
				}
			}
			t.Steps = append(t.Steps, st)
		}
		// The last step answers; once calls outnumber steps it is played
		// again, so it must not call tools or the prompt would loop.
		t.Steps = append(t.Steps, step{Text: text(), Chunk: 16, DelayMS: r.IntN(3)})
		turns = append(turns, t)
	}
	b, err := json.Marshal(map[string]any{"turns": turns})
	if err != nil {
		panic(err) // plain maps and structs always encode
	}
	return b
}

// malformed is a line that is not a valid command and the response it
// must get: the command it names (none when it cannot be read) and the
// error code.
type malformed struct {
	line    string
	command string
	code    string
	// id is the id the response echoes, when the line has a readable one.
	id string
}

// malformedLines are the broken lines the soak sends; maxLine is the
// process's --max-line-bytes.
func malformedLines(maxLine int) []malformed {
	return []malformed{
		{line: `{`, code: "malformed_json"},
		{line: `[1,2]`, code: "malformed_json"},
		{line: `"prompt"`, code: "malformed_json"},
		{line: `{"type":"launch","id":"bad"}`, command: "launch", code: "unknown_command", id: `"bad"`},
		{line: `{"type":"prompt","id":"bad"}`, command: "prompt", code: "invalid_params", id: `"bad"`},
		{line: `{"type":"abort","id":"bad","all":"yes"}`, command: "abort", code: "invalid_params", id: `"bad"`},
		{line: `{"id":{"n":1},"type":"ping"}`, command: "ping", code: "invalid_params"},
		{line: "\xff\xfe{}", code: "invalid_utf8"},
		{line: strings.Repeat("x", maxLine+1), code: "line_too_long"},
	}
}

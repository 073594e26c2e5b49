package fakeprovider

import (
	"bytes"
	"strconv"
)

// openaiChunk appends one data-only SSE event carrying a
// chat.completion.chunk whose choices array is choices.
func openaiChunk(b *bytes.Buffer, id, choices string) {
	b.WriteString(`data: {"id":"chatcmpl-bench-`)
	b.WriteString(id)
	b.WriteString(`","object":"chat.completion.chunk","created":1700000000,"model":"` + model + `","choices":`)
	b.WriteString(choices)
	b.WriteString("}\n\n")
}

// openaiDelta returns a one-choice array carrying delta and finish.
func openaiDelta(delta, finish string) string {
	return `[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]`
}

// renderOpenAI renders the Chat Completions stream that answers with sc;
// id makes the completion and tool call ids unique.
func renderOpenAI(sc scenario, id string) []byte {
	b := newBody(sc)
	finish, output := `"stop"`, 0
	switch sc.kind {
	case kindToolCall:
		finish, output = `"tool_calls"`, 20
		openaiChunk(b, id, openaiDelta(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_bench_`+id+
			`","type":"function","function":{"name":`+quote(sc.tool)+`,"arguments":""}}]}`, "null"))
		for _, part := range sc.args {
			openaiChunk(b, id, openaiDelta(`{"tool_calls":[{"index":0,"function":{"arguments":`+quote(part)+`}}]}`, "null"))
		}
	default:
		output = sc.count()
		openaiChunk(b, id, openaiDelta(`{"role":"assistant","content":""}`, "null"))
		sc.eachDelta(func(d string) {
			openaiChunk(b, id, openaiDelta(`{"content":`+quote(d)+`}`, "null"))
		})
	}
	openaiChunk(b, id, openaiDelta(`{}`, finish))
	openaiChunk(b, id, `[],"usage":{"prompt_tokens":`+strconv.Itoa(inputTokens)+
		`,"completion_tokens":`+strconv.Itoa(output)+
		`,"total_tokens":`+strconv.Itoa(inputTokens+output)+`}`)
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

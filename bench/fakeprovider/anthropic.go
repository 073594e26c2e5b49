package fakeprovider

import (
	"bytes"
	"strconv"
)

// anthropicEvent appends one named SSE event.
func anthropicEvent(b *bytes.Buffer, name, data string) {
	b.WriteString("event: ")
	b.WriteString(name)
	b.WriteString("\ndata: ")
	b.WriteString(data)
	b.WriteString("\n\n")
}

// renderAnthropic renders the Messages API stream that answers with sc;
// id makes the message and tool ids unique.
func renderAnthropic(sc scenario, id string) []byte {
	b := newBody(sc)
	anthropicEvent(b, "message_start", `{"type":"message_start","message":{"id":"msg_bench_`+id+
		`","type":"message","role":"assistant","content":[],"model":"`+model+
		`","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`+strconv.Itoa(inputTokens)+
		`,"output_tokens":1}}}`)
	stop, output := "end_turn", 0
	switch sc.kind {
	case kindToolCall:
		stop, output = "tool_use", 20
		anthropicEvent(b, "content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_bench_`+
			id+`","name":`+quote(sc.tool)+`,"input":{}}}`)
		anthropicEvent(b, "ping", `{"type":"ping"}`)
		for _, part := range sc.args {
			anthropicEvent(b, "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":`+
				quote(part)+`}}`)
		}
	default:
		output = sc.count()
		anthropicEvent(b, "content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		anthropicEvent(b, "ping", `{"type":"ping"}`)
		sc.eachDelta(func(d string) {
			anthropicEvent(b, "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+
				quote(d)+`}}`)
		})
	}
	anthropicEvent(b, "content_block_stop", `{"type":"content_block_stop","index":0}`)
	anthropicEvent(b, "message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+stop+
		`","stop_sequence":null},"usage":{"output_tokens":`+strconv.Itoa(output)+`}}`)
	anthropicEvent(b, "message_stop", `{"type":"message_stop"}`)
	return b.Bytes()
}

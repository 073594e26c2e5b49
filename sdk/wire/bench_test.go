package wire

import (
	"encoding/json"
	"testing"
)

var benchLines = map[string][]byte{
	"prompt":     []byte(`{"id":"1","type":"prompt","message":"fix the failing test in parser_test.go and run the tests again","images":[]}`),
	"text_delta": []byte(`{"type":"text_delta","seq":1042,"prompt_id":"1","delta":"All tests pass."}`),
	"tool_call":  []byte(`{"type":"tool_call","seq":1043,"prompt_id":"1","id":"toolu_01","name":"bash","args":{"command":"go test ./...","timeout":120}}`),
	"usage":      []byte(`{"type":"usage","seq":1044,"prompt_id":"1","input":1200,"output":80,"cache_read":0,"cache_write":0,"cost_usd":0.0048,"cumulative":{"input":2400,"output":160,"cache_read":0,"cache_write":0,"cost_usd":0.0096}}`),
}

// Hand-written structs of the same shapes: the floor plain json.Unmarshal
// sets for the generated decoders.
type plainID = json.RawMessage

type plainPrompt struct {
	ID      plainID `json:"id"`
	Type    string  `json:"type"`
	Message string  `json:"message"`
	Images  []struct {
		MIMEType string `json:"mime_type"`
		Data     string `json:"data"`
	} `json:"images"`
}

type plainTextDelta struct {
	Type     string  `json:"type"`
	Seq      int64   `json:"seq"`
	PromptID plainID `json:"prompt_id"`
	Delta    string  `json:"delta"`
}

type plainToolCall struct {
	Type     string          `json:"type"`
	Seq      int64           `json:"seq"`
	PromptID plainID         `json:"prompt_id"`
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Args     json.RawMessage `json:"args"`
}

type plainUsageEvent struct {
	Type       string  `json:"type"`
	Seq        int64   `json:"seq"`
	PromptID   plainID `json:"prompt_id"`
	Input      int64   `json:"input"`
	Output     int64   `json:"output"`
	CacheRead  int64   `json:"cache_read"`
	CacheWrite int64   `json:"cache_write"`
	CostUSD    float64 `json:"cost_usd"`
	Cumulative struct {
		Input      int64   `json:"input"`
		Output     int64   `json:"output"`
		CacheRead  int64   `json:"cache_read"`
		CacheWrite int64   `json:"cache_write"`
		CostUSD    float64 `json:"cost_usd"`
	} `json:"cumulative"`
}

func BenchmarkDecode(b *testing.B) {
	plain := map[string]func() any{
		"prompt":     func() any { return new(plainPrompt) },
		"text_delta": func() any { return new(plainTextDelta) },
		"tool_call":  func() any { return new(plainToolCall) },
		"usage":      func() any { return new(plainUsageEvent) },
	}
	for _, name := range []string{"prompt", "text_delta", "tool_call", "usage"} {
		line := benchLines[name]
		b.Run(name+"/plain", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := json.Unmarshal(line, plain[name]()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/generated", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if name == "prompt" {
					_, err = DecodeCommand(line)
				} else {
					_, err = DecodeEvent(line)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/generated+validate", func(b *testing.B) {
			b.ReportAllocs()
			validate := ValidateEvent
			decode := func(l []byte) error { _, err := DecodeEvent(l); return err }
			if name == "prompt" {
				validate = ValidateCommand
				decode = func(l []byte) error { _, err := DecodeCommand(l); return err }
			}
			for b.Loop() {
				if err := validate(line); err != nil {
					b.Fatal(err)
				}
				if err := decode(line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEncode(b *testing.B) {
	ev := &TextDeltaEvent{Seq: 1042, PromptID: StringID("1"), Delta: "All tests pass."}
	b.Run("text_delta/AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 256)
		for b.Loop() {
			buf = ev.AppendJSON(buf[:0])
		}
	})
	b.Run("text_delta/encoding-json-plain", func(b *testing.B) {
		b.ReportAllocs()
		p := plainTextDelta{Type: "text_delta", Seq: 1042, PromptID: json.RawMessage(`"1"`), Delta: "All tests pass."}
		for b.Loop() {
			if _, err := json.Marshal(&p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

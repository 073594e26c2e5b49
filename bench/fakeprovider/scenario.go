package fakeprovider

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The prompts that select a scenario. The fake provider looks for them in
// the text of the last user message that carries text, so a long transcript
// of earlier prompts does not change what the next prompt gets.
const (
	// PromptShort asks for a short answer of a few text deltas.
	PromptShort = "bench:short"
	// PromptTool asks for one call to the bash tool running `echo hi`,
	// followed, once the tool result comes back, by a short text answer.
	PromptTool = "bench:tool"
	// PromptSleep asks for one call to the bash tool running
	// [SleepCommand], work for an abort to cut, followed, once the tool
	// result comes back, by a short text answer.
	PromptSleep = "bench:sleep"
	// deltasPrefix starts a prompt built by [PromptDeltas].
	deltasPrefix = "bench:deltas="
	// readPrefix starts a prompt built by [PromptRead].
	readPrefix = "bench:read="
)

// SleepCommand is the command the sleep scenario asks bash to run.
const SleepCommand = "sleep 30"

// PromptRead returns the prompt that asks for one call to the read tool
// on path (which must not hold white space), followed, once the tool
// result comes back, by a short text answer.
func PromptRead(path string) string { return readPrefix + path }

// DeltaSize is the length in bytes of every text delta of a
// [PromptDeltas] answer.
const DeltaSize = 16

// ToolCommand is the command the tool scenario asks the bash tool to run,
// and ToolOutput what it prints.
const (
	ToolCommand = "echo hi"
	ToolOutput  = "hi"
)

// maxDeltas bounds the size of an answer a prompt may ask for.
const maxDeltas = 10_000_000

// PromptDeltas returns the prompt that asks for an answer of n text deltas
// of [DeltaSize] bytes each.
func PromptDeltas(n int) string { return deltasPrefix + strconv.Itoa(n) }

// deltaText returns the text of delta i of a [PromptDeltas] answer: exactly
// [DeltaSize] bytes of plain ASCII that needs no JSON escaping and that
// names its position, so a client that loses or reorders deltas shows it.
func deltaText(i int) string { return fmt.Sprintf("d%014d ", i) }

// shortDeltas is the answer to [PromptShort] and to any prompt that names
// no scenario.
var shortDeltas = []string{"The fake ", "provider ", "answers ", "briefly."}

// kind is what an answer consists of.
type kind int

const (
	kindText     kind = iota // text deltas
	kindToolCall             // one tool call
)

// scenario is the answer the fake provider gives to one request.
type scenario struct {
	kind   kind
	deltas []string // kindText with explicit deltas
	n      int      // kindText with n generated deltas when deltas is nil
	// tool and args are the tool call of kindToolCall: the tool's name and
	// its arguments' JSON text in the pieces they stream in.
	tool string
	args []string
}

// toolCall returns the scenario of one call to tool with the arguments
// args, streamed in two pieces the way a real provider streams them.
func toolCall(tool string, args map[string]string) scenario {
	b, err := json.Marshal(args)
	if err != nil {
		panic(err) // a map of strings always encodes
	}
	half := len(b) / 2
	return scenario{kind: kindToolCall, tool: tool, args: []string{string(b[:half]), string(b[half:])}}
}

// turn is what the fake provider reads from a request, whatever its format.
type turn struct {
	// userText is the text of the last user message that has text.
	userText string
	// toolResult reports whether the last message carries a tool result,
	// and toolText is that result's text.
	toolResult bool
	toolText   string
}

// choose picks the answer to a request.
func choose(t turn) (scenario, error) {
	if t.toolResult {
		return scenario{kind: kindText, deltas: toolAnswer(t.toolText)}, nil
	}
	text := t.userText
	switch {
	case strings.Contains(text, PromptTool):
		return scenario{kind: kindToolCall, tool: "bash", args: toolArgsParts}, nil
	case strings.Contains(text, PromptSleep):
		return toolCall("bash", map[string]string{"command": SleepCommand}), nil
	case strings.Contains(text, readPrefix):
		path, _, _ := strings.Cut(text[strings.Index(text, readPrefix)+len(readPrefix):], " ")
		if path == "" {
			return scenario{}, fmt.Errorf("no path after %q in %q", readPrefix, text)
		}
		return toolCall("read", map[string]string{"path": path}), nil
	case strings.Contains(text, deltasPrefix):
		n, err := parseDeltas(text)
		if err != nil {
			return scenario{}, err
		}
		return scenario{kind: kindText, n: n}, nil
	default:
		return scenario{kind: kindText, deltas: shortDeltas}, nil
	}
}

// parseDeltas reads the count after the deltas prefix in text.
func parseDeltas(text string) (int, error) {
	rest := text[strings.Index(text, deltasPrefix)+len(deltasPrefix):]
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	n, err := strconv.Atoi(rest[:end])
	if err != nil || n < 1 || n > maxDeltas {
		return 0, fmt.Errorf("bad delta count in %q: want 1..%d", text, maxDeltas)
	}
	return n, nil
}

// toolAnswer is the short text that follows a tool result; it quotes the
// start of the result so a reader can see the tool really ran.
func toolAnswer(result string) []string {
	result = strings.TrimSpace(result)
	if len(result) > 64 {
		result = result[:64]
	}
	if result == "" {
		result = "(nothing)"
	}
	return []string{"The command ", "printed: ", result}
}

// isToolOK reports whether a tool result's text holds what the tool
// scenario's command prints, as a line of its own (a runtime may add notes
// such as the exit code on other lines).
func isToolOK(text string) bool {
	for line := range strings.Lines(text) {
		if strings.TrimSpace(line) == ToolOutput {
			return true
		}
	}
	return false
}

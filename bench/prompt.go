package bench

import (
	"errors"
	"fmt"
	"time"
)

// promptResult is what one prompt streamed.
type promptResult struct {
	// elapsed runs from writing the prompt to reading its done.
	elapsed time.Duration
	// deltas counts text_delta events and deltaBytes their text.
	deltas, deltaBytes int
	// toolCalls and toolResults count tool_call and tool_result events.
	toolCalls, toolResults int
	// head is the start of the streamed text, up to headBytes.
	head []byte
}

// headBytes bounds promptResult.head.
const headBytes = 256

// prompt sends one prompt and reads its events up to its done. A prompt
// that is refused, reports an error event, or ends a turn with stop "error"
// fails.
func (c *child) prompt(message string) (promptResult, error) {
	if err := c.arm(); err != nil {
		return promptResult{}, err
	}
	start := time.Now()
	id, err := c.send("prompt", message)
	if err != nil {
		return promptResult{}, err
	}
	var res promptResult
	var failure error
	responded := false
	for {
		f, err := c.next()
		if err != nil {
			return promptResult{}, fmt.Errorf("reading the prompt's events: %w", err)
		}
		switch f.Type {
		case "response":
			if !f.isResponse(id) {
				continue
			}
			if f.Success == nil || !*f.Success {
				return promptResult{}, fmt.Errorf("prompt refused: %s", f.failure())
			}
			responded = true
		case "text_delta":
			res.deltas++
			res.deltaBytes += len(f.Delta)
			if room := headBytes - len(res.head); room > 0 {
				res.head = append(res.head, f.Delta[:min(room, len(f.Delta))]...)
			}
		case "tool_call":
			res.toolCalls++
		case "tool_result":
			res.toolResults++
		case "error":
			if failure == nil {
				failure = fmt.Errorf("error event: %s", f.failure())
			}
		case "turn_end":
			if f.Stop == "error" && failure == nil {
				failure = errors.New("a turn ended with stop \"error\"")
			}
		case "done":
			res.elapsed = time.Since(start)
			if !responded {
				return promptResult{}, errors.New("done came before the prompt's response")
			}
			return res, failure
		}
	}
}

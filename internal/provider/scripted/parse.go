package scripted

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"time"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/models/strictjson"
)

// Load reads and validates the script file at path.
func Load(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading script: %w", err)
	}
	return Parse(data, path)
}

// Parse decodes and validates a script; name names it in errors, which give
// the position of the bad value, e.g.
//
//	script.json: turns[1].steps[0].tool_calls[0]: missing "name"
//
// The format is described in docs/providers.md; its JSON Schema is
// schema/script/script.json, and a test holds Parse and it to the same
// verdicts.
func Parse(data []byte, name string) (*Script, error) {
	root, err := strictjson.Parse(data, name)
	if err != nil {
		return nil, err
	}
	o, err := root.Object()
	if err != nil {
		return nil, err
	}
	if err := o.Allow("turns"); err != nil {
		return nil, err
	}
	turns, err := nonEmptyArray(o, "turns")
	if err != nil {
		return nil, err
	}
	s := &Script{Turns: make([]Turn, len(turns))}
	for i, tv := range turns {
		if s.Turns[i], err = parseTurn(tv); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// nonEmptyArray returns the required field name of o, an array with at
// least one element.
func nonEmptyArray(o *strictjson.Object, name string) ([]strictjson.Value, error) {
	v, err := o.Require(name)
	if err != nil {
		return nil, err
	}
	elems, err := v.Array()
	if err != nil {
		return nil, err
	}
	if len(elems) == 0 {
		return nil, v.Errorf("must not be empty")
	}
	return elems, nil
}

func parseTurn(v strictjson.Value) (Turn, error) {
	o, err := v.Object()
	if err != nil {
		return Turn{}, err
	}
	if err := o.Allow("steps", "match"); err != nil {
		return Turn{}, err
	}
	steps, err := nonEmptyArray(o, "steps")
	if err != nil {
		return Turn{}, err
	}
	t := Turn{Steps: make([]Step, len(steps))}
	if f, ok := o.Get("match"); ok {
		if t.Match, err = f.String(); err != nil {
			return Turn{}, err
		}
		if t.Match == "" {
			return Turn{}, f.Errorf("must not be empty")
		}
	}
	for i, sv := range steps {
		if t.Steps[i], err = parseStep(sv); err != nil {
			return Turn{}, err
		}
	}
	return t, nil
}

// maxBytes bounds byte counts in a script.
const maxBytes = math.MaxInt32

// parseStep decodes one step. Fields are checked in a fixed order so the
// first bad one is always the one reported.
func parseStep(v strictjson.Value) (Step, error) {
	o, err := v.Object()
	if err != nil {
		return Step{}, err
	}
	if err := o.Allow("thinking", "text", "echo", "chunk", "delay_ms", "tool_calls",
		"usage", "stop", "error", "cut_after"); err != nil {
		return Step{}, err
	}
	var st Step
	if f, ok := o.Get("thinking"); ok {
		if st.Thinking, err = f.String(); err != nil {
			return Step{}, err
		}
	}
	if f, ok := o.Get("text"); ok {
		if st.Text, err = f.String(); err != nil {
			return Step{}, err
		}
	}
	if f, ok := o.Get("echo"); ok {
		if st.Echo, err = f.Bool(); err != nil {
			return Step{}, err
		}
	}
	if st.Echo && o.Has("text") {
		return Step{}, o.Errorf(`"echo" and "text" are exclusive`)
	}
	if f, ok := o.Get("chunk"); ok {
		if st.Chunk, err = f.Int(1, maxBytes); err != nil {
			return Step{}, err
		}
	}
	if f, ok := o.Get("delay_ms"); ok {
		ms, err := f.Int(0, 10*60*1000)
		if err != nil {
			return Step{}, err
		}
		st.Delay = time.Duration(ms) * time.Millisecond
	}
	if f, ok := o.Get("tool_calls"); ok {
		if st.ToolCalls, err = parseToolCalls(f); err != nil {
			return Step{}, err
		}
	}
	if f, ok := o.Get("usage"); ok {
		if st.Usage, err = parseUsage(f); err != nil {
			return Step{}, err
		}
	}
	if f, ok := o.Get("stop"); ok {
		if st.Stop, err = parseStop(f); err != nil {
			return Step{}, err
		}
	}
	if f, ok := o.Get("error"); ok {
		if st.Error, err = parseFailure(f); err != nil {
			return Step{}, err
		}
	}
	if f, ok := o.Get("cut_after"); ok {
		if st.CutAfter, err = f.Int(0, maxBytes); err != nil {
			return Step{}, err
		}
	}
	if st.CutAfter > 0 && st.Error != nil {
		return Step{}, o.Errorf(`"cut_after" and "error" are exclusive`)
	}
	return st, nil
}

func parseToolCalls(v strictjson.Value) ([]ToolCall, error) {
	elems, err := v.Array()
	if err != nil {
		return nil, err
	}
	calls := make([]ToolCall, len(elems))
	for i, e := range elems {
		if calls[i], err = parseToolCall(e); err != nil {
			return nil, err
		}
	}
	return calls, nil
}

func parseToolCall(v strictjson.Value) (ToolCall, error) {
	o, err := v.Object()
	if err != nil {
		return ToolCall{}, err
	}
	if err := o.Allow("id", "name", "args", "args_raw"); err != nil {
		return ToolCall{}, err
	}
	var tc ToolCall
	if f, ok := o.Get("id"); ok {
		if tc.ID, err = f.String(); err != nil {
			return ToolCall{}, err
		}
	}
	f, err := o.Require("name")
	if err != nil {
		return ToolCall{}, err
	}
	if tc.Name, err = f.String(); err != nil {
		return ToolCall{}, err
	}
	if tc.Name == "" {
		return ToolCall{}, f.Errorf("must not be empty")
	}
	args, hasArgs := o.Get("args")
	raw, hasRaw := o.Get("args_raw")
	switch {
	case hasArgs && hasRaw:
		return ToolCall{}, o.Errorf(`"args" and "args_raw" are exclusive`)
	case hasArgs:
		if _, err := args.Object(); err != nil {
			return ToolCall{}, err
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, args.Raw()); err != nil {
			return ToolCall{}, args.Errorf("%v", err)
		}
		tc.Args = buf.String()
	case hasRaw:
		if tc.Args, err = raw.String(); err != nil {
			return ToolCall{}, err
		}
	default:
		tc.Args = "{}"
	}
	return tc, nil
}

func parseUsage(v strictjson.Value) (*llm.Usage, error) {
	o, err := v.Object()
	if err != nil {
		return nil, err
	}
	if err := o.Allow("input", "output", "cache_read", "cache_write"); err != nil {
		return nil, err
	}
	u := &llm.Usage{}
	for _, fld := range []struct {
		name string
		dst  *int
	}{{"input", &u.Input}, {"output", &u.Output}, {"cache_read", &u.CacheRead}, {"cache_write", &u.CacheWrite}} {
		if f, ok := o.Get(fld.name); ok {
			if *fld.dst, err = f.Int(0, maxBytes); err != nil {
				return nil, err
			}
		}
	}
	return u, nil
}

func parseStop(v strictjson.Value) (llm.StopReason, error) {
	s, err := v.String()
	if err != nil {
		return "", err
	}
	switch r := llm.StopReason(s); r {
	case llm.StopEndTurn, llm.StopToolUse, llm.StopLength:
		return r, nil
	}
	return "", v.Errorf(`want "end_turn", "tool_use" or "length", got %q`, s)
}

func parseFailure(v strictjson.Value) (*Failure, error) {
	o, err := v.Object()
	if err != nil {
		return nil, err
	}
	if err := o.Allow("status", "kind", "message", "retry_after_ms", "times", "after_bytes"); err != nil {
		return nil, err
	}
	f := &Failure{}
	if fv, ok := o.Get("status"); ok {
		if f.Status, err = fv.Int(100, 599); err != nil {
			return nil, err
		}
	}
	if fv, ok := o.Get("kind"); ok {
		if f.Kind, err = fv.String(); err != nil {
			return nil, err
		}
	}
	if fv, ok := o.Get("message"); ok {
		if f.Message, err = fv.String(); err != nil {
			return nil, err
		}
	}
	if fv, ok := o.Get("retry_after_ms"); ok {
		ms, err := fv.Int(0, 24*60*60*1000)
		if err != nil {
			return nil, err
		}
		f.RetryAfter = time.Duration(ms) * time.Millisecond
	}
	if fv, ok := o.Get("times"); ok {
		if f.Times, err = fv.Int(1, 1000); err != nil {
			return nil, err
		}
	}
	if fv, ok := o.Get("after_bytes"); ok {
		if f.AfterBytes, err = fv.Int(0, maxBytes); err != nil {
			return nil, err
		}
	}
	switch {
	case f.Status > 0 && f.AfterBytes > 0:
		return nil, o.Errorf(`"status" and "after_bytes" are exclusive`)
	case f.Status == 0 && f.AfterBytes == 0:
		return nil, o.Errorf(`needs "status" (fail before output) or "after_bytes" (fail mid-stream)`)
	case f.Times > 0 && f.Status == 0:
		return nil, o.Errorf(`"times" applies only to "status" failures`)
	}
	return f, nil
}

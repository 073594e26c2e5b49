package httpcall

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"zot.dev/zot/internal/llm"
)

// textAssembler reads each event's data as a text delta; fail, when set,
// ends its attempt with that error after the first event.
type textAssembler struct {
	sink     llm.Sink
	reported bool
	text     string
	fail     error
}

func (a *textAssembler) Run(s *Stream) error {
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			return a.fail
		}
		if err != nil {
			return err
		}
		a.reported = true
		a.text += string(ev.Data)
		a.sink(llm.Event{Kind: llm.EventTextDelta, Text: string(ev.Data)})
		if a.fail != nil {
			return a.fail
		}
	}
}

func (a *textAssembler) Reported() bool { return a.reported }

func (a *textAssembler) Response() *llm.Response {
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.TextBlock{Text: a.text}}}, Stop: llm.StopEndTurn}
}

// TestStreamModel: EventStart is reported once however many attempts a
// call takes; a failure before output is retried and one after is final,
// with the partial answer; an abort marks the response aborted.
func TestStreamModel(t *testing.T) {
	srv := callServer(t)
	opt := Options{MaxAttempts: 3, Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }}
	overloaded := &llm.Error{Kind: "overloaded_error", Message: "busy", Retryable: true}
	call := func(ctx context.Context, fails func(attempt int) (error, bool)) (*llm.Response, []llm.Event, int, error) {
		var evs []llm.Event
		attempts := 0
		resp, err := StreamModel(ctx, ModelCall{
			Provider: "test", URL: srv.URL, Body: bytesBody("{}"),
			Options: opt,
			Assembler: func(sink llm.Sink) Assembler {
				attempts++
				a := &textAssembler{sink: sink}
				if err, early := fails(attempts); err != nil && early {
					a.reported, a.fail = false, err
					return &earlyFail{a}
				} else if err != nil {
					a.fail = err
				}
				return a
			},
		}, func(ev llm.Event) { evs = append(evs, ev) })
		return resp, evs, attempts, err
	}
	// Two failures before output, then an answer.
	resp, evs, attempts, err := call(context.Background(), func(n int) (error, bool) {
		if n < 3 {
			return overloaded, true
		}
		return nil, false
	})
	if err != nil || attempts != 3 || resp.Message.Text() != "x" || len(evs) != 2 || evs[0].Kind != llm.EventStart || evs[1].Text != "x" {
		t.Errorf("retried before output: err %v, %d attempts, %q, events %+v", err, attempts, resp.Message.Text(), evs)
	}
	// A failure after output is final, with what arrived.
	resp, evs, attempts, err = call(context.Background(), func(int) (error, bool) { return overloaded, false })
	if !errors.Is(err, overloaded) || attempts != 1 || resp.Stop != llm.StopError || resp.Message.Text() != "x" || len(evs) != 2 {
		t.Errorf("failed after output: err %v, %d attempts, stop %s, %q, events %+v", err, attempts, resp.Stop, resp.Message.Text(), evs)
	}
	// An abort: the context's error, the response aborted.
	ctx, cancel := context.WithCancel(context.Background())
	resp, _, _, err = call(ctx, func(int) (error, bool) { cancel(); return errors.New("read failed"), false })
	if !errors.Is(err, context.Canceled) || resp.Stop != llm.StopAborted {
		t.Errorf("aborted: err %v, stop %s", err, resp.Stop)
	}
	// No sink: nothing to report to, the answer all the same.
	resp, err = StreamModel(context.Background(), ModelCall{
		Options: opt,
		Open: func(ctx context.Context, once Options) (*Stream, error) {
			return Post(ctx, "test", srv.URL, nil, []byte("{}"), once, nil)
		},
		Assembler: func(sink llm.Sink) Assembler { return &textAssembler{sink: sink} },
	}, nil)
	if err != nil || resp.Message.Text() != "x" {
		t.Errorf("nil sink: %v, %q", err, resp.Message.Text())
	}
	if r := Failed(nil); r.Stop != llm.StopError || r.Message.Role != llm.RoleAssistant {
		t.Errorf("Failed(nil) = %+v", r)
	}
}

// earlyFail fails its attempt before reporting anything.
type earlyFail struct{ *textAssembler }

func (e *earlyFail) Run(*Stream) error { return e.fail }

func TestOnce(t *testing.T) {
	o := Options{MaxAttempts: 4}
	if got := o.Once(time.Minute); got.MaxAttempts != 1 || got.IdleTimeout != time.Minute {
		t.Errorf("Once(1m) = %+v", got)
	}
	if got := o.Once(0); got.IdleTimeout != 0 {
		t.Errorf("Once(0) set idle %v", got.IdleTimeout)
	}
	o.IdleTimeout = time.Second
	if got := o.Once(time.Minute); got.IdleTimeout != time.Second {
		t.Errorf("a set idle timeout became %v", got.IdleTimeout)
	}
}

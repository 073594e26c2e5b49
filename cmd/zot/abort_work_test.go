package main

import (
	"testing"

	"zot.dev/zot/sdk/wire"
)

// TestAbortOneWork: abort with prompt_id cancels the work that command
// started and nothing else: running it is aborted, queued it is dropped,
// ended it is left alone, and the work around it runs on.
func TestAbortOneWork(t *testing.T) {
	// byWork reads frames until every id in ids has its done, and returns
	// each work's events and the answers read on the way.
	byWork := func(p *proc, ids ...string) (map[string][]wire.Event, []*wire.Response) {
		t.Helper()
		evs := map[string][]wire.Event{}
		var answers []*wire.Response
		left := len(ids)
		for left > 0 {
			r := p.next()
			if r.resp != nil {
				answers = append(answers, r.resp)
				continue
			}
			id := r.ev.GetPromptID().String()
			evs[id] = append(evs[id], r.ev)
			if r.ev.Type() == wire.TypeDoneEvent {
				left--
			}
		}
		return evs, answers
	}
	stop := func(evs []wire.Event) wire.StopReason {
		for i := len(evs) - 1; i >= 0; i-- {
			if te, ok := evs[i].(*wire.TurnEndEvent); ok {
				return te.Stop
			}
		}
		return ""
	}
	answered := func(t *testing.T, answers []*wire.Response, want string) {
		t.Helper()
		for _, r := range answers {
			if r.Command == "abort" {
				wantResponse(t, r, "abort", true, "")
				if string(r.Data) != want {
					t.Errorf("abort answered %s, want %s", r.Data, want)
				}
				return
			}
		}
		t.Fatalf("no answer to abort among %d", len(answers))
	}

	t.Run("running, with work queued behind", func(t *testing.T) {
		p := start(t, nil, rpcArgs(t, "--script", slowScript(t, 5))...)
		p.send(`{"id":"a","type":"prompt","message":"one"}`)
		p.send(`{"id":"b","type":"prompt","message":"two"}`)
		p.response()
		p.response()
		p.until("text_delta")
		p.send(`{"id":"x","type":"abort","prompt_id":"a"}`)
		evs, answers := byWork(p, `"a"`, `"b"`)
		answered(t, answers, `{"aborted":true,"dropped":0}`)
		if stop(evs[`"a"`]) != wire.StopAborted || stop(evs[`"b"`]) != wire.StopEndTurn {
			t.Errorf("a ended %q, b %q; want aborted, end_turn", stop(evs[`"a"`]), stop(evs[`"b"`]))
		}
	})
	t.Run("queued", func(t *testing.T) {
		p := start(t, nil, rpcArgs(t, "--script", slowScript(t, 5))...)
		p.send(`{"id":"a","type":"prompt","message":"one"}`)
		p.send(`{"id":"b","type":"prompt","message":"two"}`)
		p.send(`{"id":"c","type":"prompt","message":"three"}`)
		p.response()
		p.response()
		p.response()
		p.send(`{"id":"x","type":"abort","prompt_id":"b"}`)
		evs, answers := byWork(p, `"a"`, `"b"`, `"c"`)
		answered(t, answers, `{"aborted":false,"dropped":1}`)
		if stop(evs[`"a"`]) != wire.StopEndTurn || stop(evs[`"b"`]) != wire.StopAborted {
			t.Errorf("a ended %q, b %q; want end_turn, aborted", stop(evs[`"a"`]), stop(evs[`"b"`]))
		}
		for _, ev := range evs[`"b"`] {
			if ev.Type() == wire.TypeUserMessageEvent || ev.Type() == wire.TypeTextDeltaEvent {
				t.Errorf("the dropped prompt ran: %v", types(evs[`"b"`]))
			}
		}
		if stop(evs[`"c"`]) != wire.StopEndTurn {
			t.Errorf("the prompt queued after the dropped one ended %q: %v", stop(evs[`"c"`]), types(evs[`"c"`]))
		}
	})
	t.Run("ended, while other work runs", func(t *testing.T) {
		p := start(t, nil, rpcArgs(t, "--script", slowScript(t, 5))...)
		p.send(`{"id":"a","type":"prompt","message":"one"}`)
		p.response()
		p.untilDone()
		p.send(`{"id":"b","type":"prompt","message":"two"}`)
		p.response()
		p.until("text_delta")
		p.send(`{"id":"x","type":"abort","prompt_id":"a"}`)
		evs, answers := byWork(p, `"b"`)
		answered(t, answers, `{"aborted":false,"dropped":0}`)
		if stop(evs[`"b"`]) != wire.StopEndTurn {
			t.Errorf("b ended %q after an abort of the ended a", stop(evs[`"b"`]))
		}
	})
	t.Run("not with all", func(t *testing.T) {
		p := start(t, nil, rpcArgs(t)...)
		p.send(`{"id":"x","type":"abort","prompt_id":"a","all":true}`)
		resp, _ := p.response()
		wantResponse(t, resp, "abort", false, wire.CodeInvalidParams)
	})
}

//go:build linux

package soak

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"zot.dev/zot/sdk/wire"
)

// play feeds the checker the commands sent (lines starting with ">",
// then the command type, the id and flags) and the frames read (lines
// of JSON), and returns the failures it recorded.
func play(t *testing.T, script string) ([]string, Stats) {
	t.Helper()
	var stats Stats
	var fails []string
	c := &checker{stats: &stats, fail: func(f string, a ...any) { fails = append(fails, fmt.Sprintf(f, a...)) }}
	for _, l := range strings.Split(strings.TrimSpace(script), "\n") {
		l = strings.TrimSpace(l)
		if cmd, ok := strings.CutPrefix(l, "> "); ok {
			f := strings.Fields(cmd)
			e := expect{command: f[0], id: wire.StringID(f[1])}
			for _, flag := range f[2:] {
				switch {
				case flag == "all":
					e.all = true
				case strings.HasPrefix(flag, "bad="):
					e.bad, e.code = true, wire.ErrorCode(strings.TrimPrefix(flag, "bad="))
				}
			}
			c.sent(e)
			continue
		}
		resp, ev, err := wire.DecodeFrame([]byte(l))
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		c.frame(resp, ev)
	}
	return fails, stats
}

// A prompt, a second one queued behind it, an abort of both: every
// promise kept.
const kept = `
> prompt a
> prompt b
> abort x all
{"type":"response","id":"a","command":"prompt","success":true,"data":{"started":true}}
{"type":"response","id":"b","command":"prompt","success":true,"data":{"started":false,"queued":true,"position":1}}
{"type":"user_message","seq":1,"prompt_id":"a","content":[{"type":"text","text":"hi"}],"time":"2026-11-23T10:00:00Z"}
{"type":"tool_call","seq":2,"prompt_id":"a","id":"t1","name":"bash","args":{"command":"sleep 1"}}
{"type":"turn_end","seq":3,"prompt_id":"a","stop":"tool_use"}
{"type":"response","id":"x","command":"abort","success":true,"data":{"aborted":true,"dropped":1}}
{"type":"tool_result","seq":4,"prompt_id":"a","id":"t1","is_error":true,"content":[{"type":"text","text":"aborted"}]}
{"type":"turn_end","seq":5,"prompt_id":"a","stop":"aborted"}
{"type":"done","seq":6,"prompt_id":"a"}
{"type":"turn_end","seq":7,"prompt_id":"b","stop":"aborted"}
{"type":"done","seq":8,"prompt_id":"b"}
> get_state s
> clear c
{"type":"response","id":"s","command":"get_state","success":true,"data":{"provider":"scripted","model":"scripted","cwd":"/","message_count":0,"busy":false,"usage":{"input":0,"output":0,"cache_read":0,"cache_write":0}}}
{"type":"response","id":"c","command":"clear","success":true}
> launch m bad=unknown_command
{"type":"response","id":"m","command":"launch","success":false,"error":"unknown command","code":"unknown_command"}
`

func TestCheckerPasses(t *testing.T) {
	fails, st := play(t, kept)
	if len(fails) > 0 {
		t.Fatalf("failures: %q", fails)
	}
	if st.Prompts != 2 || st.Dones != 2 || st.Aborted != 1 || st.Dropped != 1 || st.Malformed != 1 || st.ToolCalls != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestCheckerCatches breaks the kept script one way at a time.
func TestCheckerCatches(t *testing.T) {
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"lost response", `{"type":"response","id":"a","command":"prompt","success":true,"data":{"started":true}}` + "\n", "", "lost or out of order"},
		{"seq", `"seq":7`, `"seq":5`, "seq 5 after 6"},
		{"interleaved", `"seq":4,"prompt_id":"a"`, `"seq":4,"prompt_id":"b"`, "while"},
		{"dropped count", `"dropped":1`, `"dropped":0`, "abort all answered aborted=true dropped=0"},
		{"not cut", `"aborted":true,"dropped":1`, `"aborted":false,"dropped":1`, "aborted=false while \"a\" ran"},
		{"position", `"position":1`, `"position":2`, "queued at position 2"},
		{"dropped work ran", `{"type":"turn_end","seq":7,"prompt_id":"b","stop":"aborted"}`,
			`{"type":"assistant_start","seq":7,"prompt_id":"b"}` + "\n" + `{"type":"turn_end","seq":9,"prompt_id":"b","stop":"aborted"}`, "dropped"},
		{"no result", `{"type":"tool_result","seq":4,"prompt_id":"a","id":"t1","is_error":true,"content":[{"type":"text","text":"aborted"}]}` + "\n", "", "0 tool results for 1 tool calls"},
		{"not aborted", `"seq":5,"prompt_id":"a","stop":"aborted"`, `"seq":5,"prompt_id":"a","stop":"end_turn"`, "want aborted"},
		{"error after abort", `{"type":"turn_end","seq":5`, `{"type":"error","seq":5,"prompt_id":"a","message":"x"}` + "\n" + `{"type":"turn_end","seq":51`, "error event after the abort"},
		{"busy when idle", `{"type":"response","id":"c","command":"clear","success":true}`,
			`{"type":"response","id":"c","command":"clear","success":false,"error":"busy","code":"busy"}`, "answered busy"},
		{"malformed accepted", `"command":"launch","success":false,"error":"unknown command","code":"unknown_command"`, `"command":"launch","success":true`, "malformed line"},
		{"done twice", `{"type":"done","seq":8,"prompt_id":"b"}`, `{"type":"done","seq":8,"prompt_id":"b"}` + "\n" + `{"type":"done","seq":9,"prompt_id":"b"}`, "when no prompt or compact is unfinished"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(kept, tc.old) {
				t.Fatalf("the kept script lacks %q", tc.old)
			}
			fails, _ := play(t, strings.Replace(kept, tc.old, tc.new, 1))
			for _, f := range fails {
				if strings.Contains(f, tc.want) {
					return
				}
			}
			t.Errorf("no failure mentions %q: %q", tc.want, fails)
		})
	}
}

func TestCheckerIdleWhileBusy(t *testing.T) {
	fails, _ := play(t, `
> prompt a
> get_state s
{"type":"response","id":"a","command":"prompt","success":true,"data":{"started":true}}
{"type":"response","id":"s","command":"get_state","success":true,"data":{"provider":"scripted","model":"scripted","cwd":"/","message_count":0,"busy":false,"usage":{"input":0,"output":0,"cache_read":0,"cache_write":0}}}
`)
	if len(fails) != 1 || !strings.Contains(fails[0], "get_state says idle") {
		t.Errorf("failures %q", fails)
	}
}

// TestCheckerWindows: states the client cannot tell apart are accepted.
func TestCheckerWindows(t *testing.T) {
	fails, st := play(t, `
> prompt a
> prompt b
> abort x all
> abort y all
> prompt c
{"type":"response","id":"a","command":"prompt","success":true,"data":{"started":true}}
{"type":"response","id":"b","command":"prompt","success":true,"data":{"started":false,"queued":true,"position":1}}
{"type":"response","id":"x","command":"abort","success":true,"data":{"aborted":true,"dropped":1}}
{"type":"response","id":"y","command":"abort","success":true,"data":{"aborted":true,"dropped":0}}
{"type":"response","id":"c","command":"prompt","success":true,"data":{"started":false,"queued":true,"position":1}}
{"type":"turn_end","seq":1,"prompt_id":"a","stop":"aborted"}
{"type":"done","seq":2,"prompt_id":"a"}
> prompt d
{"type":"response","id":"d","command":"prompt","success":true,"data":{"started":false,"queued":true,"position":2}}
> abort z
{"type":"response","id":"z","command":"abort","success":true,"data":{"aborted":false,"dropped":0}}
{"type":"turn_end","seq":3,"prompt_id":"b","stop":"aborted"}
{"type":"done","seq":4,"prompt_id":"b"}
{"type":"done","seq":5,"prompt_id":"c"}
{"type":"done","seq":6,"prompt_id":"d"}
> prompt e
> prompt f
> abort w all
{"type":"response","id":"e","command":"prompt","success":true,"data":{"started":true}}
{"type":"response","id":"f","command":"prompt","success":true,"data":{"started":false,"queued":true,"position":1}}
{"type":"response","id":"w","command":"abort","success":true,"data":{"aborted":true,"dropped":1}}
{"type":"turn_end","seq":7,"prompt_id":"e","stop":"aborted"}
{"type":"done","seq":8,"prompt_id":"e"}
> prompt g
{"type":"response","id":"g","command":"prompt","success":true,"data":{"started":true}}
{"type":"turn_end","seq":9,"prompt_id":"f","stop":"aborted"}
{"type":"done","seq":10,"prompt_id":"f"}
{"type":"done","seq":11,"prompt_id":"g"}
`)
	if len(fails) > 0 {
		t.Errorf("failures %q", fails)
	}
	if st.Dones != 7 || st.Dropped != 2 {
		t.Errorf("stats %+v", st)
	}
}

// TestAbortAfterLastTurn: an abort answered after the work's last
// turn_end does not cut it (aborted=false, the queue behind it dropped
// with all); one answered aborted=true must be followed by turn_end
// aborted, even when the model's answer had come in full.
func TestAbortAfterLastTurn(t *testing.T) {
	fails, st := play(t, `
> prompt a
> prompt b
{"type":"response","id":"a","command":"prompt","success":true,"data":{"started":true}}
{"type":"response","id":"b","command":"prompt","success":true,"data":{"started":false,"queued":true,"position":1}}
{"type":"text_delta","seq":1,"prompt_id":"a","delta":"hi"}
{"type":"turn_end","seq":2,"prompt_id":"a","stop":"end_turn"}
> abort x all
{"type":"response","id":"x","command":"abort","success":true,"data":{"aborted":false,"dropped":1}}
{"type":"done","seq":3,"prompt_id":"a"}
{"type":"turn_end","seq":4,"prompt_id":"b","stop":"aborted"}
{"type":"done","seq":5,"prompt_id":"b"}
`)
	if len(fails) > 0 || st.Aborted != 0 || st.Dropped != 1 {
		t.Errorf("failures %q, stats %+v", fails, st)
	}
	fails, _ = play(t, `
> prompt a
{"type":"response","id":"a","command":"prompt","success":true,"data":{"started":true}}
{"type":"text_delta","seq":1,"prompt_id":"a","delta":"hi"}
{"type":"usage","seq":2,"prompt_id":"a","input":1,"output":1,"cache_read":0,"cache_write":0,"cost_usd":0,"cumulative":{"input":1,"output":1,"cache_read":0,"cache_write":0,"cost_usd":0}}
> abort x
{"type":"response","id":"x","command":"abort","success":true,"data":{"aborted":true,"dropped":0}}
{"type":"assistant_message","seq":3,"prompt_id":"a","content":[{"type":"text","text":"hi"}],"time":"2026-11-23T10:00:00Z"}
{"type":"turn_end","seq":4,"prompt_id":"a","stop":"end_turn"}
{"type":"done","seq":5,"prompt_id":"a"}
`)
	if len(fails) != 1 || !strings.Contains(fails[0], "events after the abort's answer: [assistant_message turn_end done]") {
		t.Errorf("failures %q", fails)
	}
	fails, _ = play(t, `
> prompt a
{"type":"response","id":"a","command":"prompt","success":true,"data":{"started":true}}
{"type":"text_delta","seq":1,"prompt_id":"a","delta":"hi"}
> abort x
{"type":"response","id":"x","command":"abort","success":true,"data":{"aborted":false,"dropped":0}}
{"type":"done","seq":2,"prompt_id":"a"}
`)
	if len(fails) != 1 || !strings.Contains(fails[0], `aborted=false while "a" ran`) {
		t.Errorf("failures %q", fails)
	}
}

func TestGrowth(t *testing.T) {
	var samples []Sample
	for i := range 60 {
		rss := int64(100)
		if i >= 50 {
			rss = 130
		}
		samples = append(samples, Sample{At: time.Duration(i) * time.Second, RSS: rss})
	}
	first, last, ok := Growth(samples, 59*time.Second, 5*time.Second, 10*time.Second)
	if !ok || first != 100 || last != 130 {
		t.Errorf("growth %d → %d (%v)", first, last, ok)
	}
	if _, _, ok := Growth(samples[:3], 59*time.Second, 5*time.Second, 10*time.Second); ok {
		t.Error("growth from empty windows")
	}
}

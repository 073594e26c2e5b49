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
		{"dropped count", `"dropped":1`, `"dropped":0`, "abort (all=true) answered"},
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

// TestLateAbort: an abort that comes after the last step's turn_end is
// counted, not failed.
func TestLateAbort(t *testing.T) {
	fails, st := play(t, `
> prompt a
{"type":"response","id":"a","command":"prompt","success":true,"data":{"started":true}}
{"type":"turn_end","seq":1,"prompt_id":"a","stop":"end_turn"}
> abort x
{"type":"response","id":"x","command":"abort","success":true,"data":{"aborted":true,"dropped":0}}
{"type":"done","seq":2,"prompt_id":"a"}
`)
	if len(fails) > 0 || st.LateAborts != 1 {
		t.Errorf("failures %q, stats %+v", fails, st)
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

package rpcclient

import (
	"testing"

	"zot.dev/zot/sdk/wire"
)

// The session commands through a real zot rpc started with --continue:
// its session is listed as current, forked before its prompt (and the
// fork loaded), loaded back, and a missing session is not_found.
func TestSessionCommands(t *testing.T) {
	home := t.TempDir()
	c := startZot(t, []string{"ZOT_HOME=" + home}, "--continue")
	s, err := c.PromptStream(ctx(t), "remember this", nil)
	if err != nil {
		t.Fatal(err)
	}
	collect(t, s)
	list, err := c.ListSessions(ctx(t), "")
	if err != nil || len(list) != 1 || list[0].Current == nil || list[0].MessageCount != 4 || list[0].Title != "remember this" {
		t.Fatalf("ListSessions: %+v %v", list, err)
	}
	parent := list[0].ID
	f, err := c.ForkSession(ctx(t), wire.ForkSessionCommand{})
	if err != nil {
		t.Fatal(err)
	}
	if !f.Loaded || f.AtIndex != 0 || f.Session.ParentID != parent || f.Session.MessageCount != 0 || f.Session.Current == nil {
		t.Errorf("ForkSession: %+v", f)
	}
	if tb, ok := f.Message.Content[0].(*wire.TextBlock); !ok || tb.Text != "remember this" {
		t.Errorf("the prompt left out: %+v", f.Message)
	}
	if st, _ := c.State(ctx(t)); st.MessageCount != 0 {
		t.Errorf("after the fork the transcript holds %d messages", st.MessageCount)
	}
	info, err := c.LoadSession(ctx(t), parent)
	if err != nil || info.ID != parent || info.Current == nil {
		t.Fatalf("LoadSession: %+v %v", info, err)
	}
	if st, _ := c.State(ctx(t)); st.MessageCount != 4 {
		t.Errorf("after loading the parent the transcript holds %d messages", st.MessageCount)
	}
	_, err = c.LoadSession(ctx(t), "20200101T000000Z-0000000000000000")
	wantCode(t, err, wire.CodeNotFound, "load_session")
	if list, _ := c.ListSessions(ctx(t), t.TempDir()); len(list) != 0 {
		t.Errorf("ListSessions of another folder: %+v", list)
	}
}

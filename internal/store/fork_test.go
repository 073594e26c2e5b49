package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/sessionfile"
)

// Fork keeps the messages before the prompt it is made at, records its
// parent in the file and the index, and leaves the parent as it was;
// a fork of a fork links to the fork.
func TestFork(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir())
	parent := "20260101T000000Z-00000000000000aa"
	write(t, s.Path(parent), "/w/one", 3) // prompts at 0, 2, 4
	before, _ := os.ReadFile(s.Path(parent))

	f, err := s.Fork(ctx, parent, ForkPoint{})
	if err != nil {
		t.Fatal(err)
	}
	if f.At != 4 || f.ID == parent || f.Parent != parent || f.ForkIndex == nil || *f.ForkIndex != 4 || f.Messages != 4 || f.CWD != "/w/one" {
		t.Errorf("fork at the last prompt: %+v", f)
	}
	if text := f.Message.Content[0].(*llm.TextBlock).Text; !strings.HasSuffix(text, "c") || f.MessageID != MessageID(f.Message) || f.ForkMessage != f.MessageID {
		t.Errorf("forked at %q (%s), entry says %s", text, f.MessageID, f.ForkMessage)
	}
	if after, _ := os.ReadFile(s.Path(parent)); string(after) != string(before) {
		t.Error("the parent changed")
	}
	msgs, err := sessionfile.Load(f.Path)
	if err != nil || len(msgs) != 4 {
		t.Fatalf("the fork holds %d messages (%v)", len(msgs), err)
	}

	// By index, and a fork of the fork by message id.
	g, err := s.Fork(ctx, parent, AtIndex(2))
	if err != nil || g.Messages != 2 || *g.ForkIndex != 2 {
		t.Fatalf("fork at 2: %+v %v", g, err)
	}
	h, err := s.Fork(ctx, f.ID, AtMessage(MessageID(msgs[2])))
	if err != nil || h.Parent != f.ID || h.Messages != 2 || *h.ForkIndex != 2 {
		t.Fatalf("fork of the fork: %+v %v", h, err)
	}
	// The index holds the links: a fresh Store (reading index.json)
	// lists them.
	list, err := open(t, s.Dir()).List(ctx, Filter{})
	if err != nil || len(list) != 4 {
		t.Fatalf("list: %+v %v", list, err)
	}
	parents := map[string]string{}
	for _, e := range list {
		parents[e.ID] = e.Parent
	}
	if parents[parent] != "" || parents[f.ID] != parent || parents[g.ID] != parent || parents[h.ID] != f.ID {
		t.Errorf("parents: %v", parents)
	}

	// A compaction's rewrite of the fork keeps its link.
	file, _, err := sessionfile.Open(h.Path, sessionfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := file.Save([]llm.Message{{Role: llm.RoleUser, Meta: map[string]string{"compaction": "true"}, Content: []llm.Block{&llm.TextBlock{Text: "summary"}}}}); err != nil {
		t.Fatal(err)
	}
	file.Close()
	if e, err := s.Get(ctx, h.ID); err != nil || e.Parent != f.ID || e.Messages != 1 {
		t.Errorf("after a rewrite: %+v %v", e, err)
	}
	// Nothing but prompts: the summary, an answer, a position past
	// the end, a message id of none.
	for _, p := range []ForkPoint{{}, AtIndex(0)} {
		if _, err := s.Fork(ctx, h.ID, p); !errors.Is(err, ErrNoForkPoint) {
			t.Errorf("fork at %v of a transcript of a summary: %v", p, err)
		}
	}
	for _, p := range []ForkPoint{AtIndex(1), AtIndex(6), AtIndex(-1), AtMessage("0123456789abcdef")} {
		if _, err := s.Fork(ctx, parent, p); !errors.Is(err, ErrNoForkPoint) {
			t.Errorf("fork at %v: %v", p, err)
		}
	}
	if _, err := s.Fork(ctx, "20260101T000000Z-00000000000000ff", ForkPoint{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("fork of no session: %v", err)
	}
	// Nothing half made: no temporary file left in the folder.
	ents, _ := os.ReadDir(s.Dir())
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestParseForkPoint(t *testing.T) {
	for in, want := range map[string]ForkPoint{"": {}, "3": AtIndex(3), "-1": AtIndex(-1), "9f2c41d07a5be318": AtMessage("9f2c41d07a5be318")} {
		if got := ParseForkPoint(in); got != want {
			t.Errorf("ParseForkPoint(%q) = %+v, want %+v", in, got, want)
		}
	}
}

// Create never replaces a file.
func TestCreateKeepsExisting(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(p, []byte("mine\n"), 0o600)
	if err := sessionfile.Create(p, sessionfile.Options{}, nil); !errors.Is(err, sessionfile.ErrExists) {
		t.Errorf("Create over a file: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "mine\n" {
		t.Errorf("the file now holds %q", b)
	}
}

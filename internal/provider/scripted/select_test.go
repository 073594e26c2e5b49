package scripted

import (
	"testing"
	"unicode/utf8"

	"zot.dev/zot/internal/llm"
)

func TestLocate(t *testing.T) {
	s := &Script{Turns: []Turn{
		{Steps: make([]Step, 3)},
		{Steps: make([]Step, 2)},
		{Steps: make([]Step, 1)},
	}}
	image := llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.ImageBlock{MIME: "image/png"}}}
	summary := user("summary of earlier work")
	summary.Meta = map[string]string{"compaction": "true"}
	cases := []struct {
		name       string
		msgs       []llm.Message
		turn, step int
		prompt     string
	}{
		{"empty transcript", nil, 0, 0, ""},
		{"first prompt", []llm.Message{user("a")}, 0, 0, "a"},
		{"tool loop", []llm.Message{user("a"), assistant("x"), toolResult("c", "out")}, 0, 1, "a"},
		{"step capped", []llm.Message{user("a"), assistant("1"), toolResult("c", ""), assistant("2"), toolResult("c", ""), assistant("3"), toolResult("c", ""), assistant("4")}, 0, 2, "a"},
		{"second prompt", []llm.Message{user("a"), assistant("x"), user("b")}, 1, 0, "b"},
		{"second prompt loop", []llm.Message{user("a"), assistant("x"), user("b"), assistant("y")}, 1, 1, "b"},
		{"turn capped", []llm.Message{user("a"), user("b"), user("c"), user("d"), assistant("x")}, 2, 0, "d"},
		{"tool results are not prompts", []llm.Message{user("a"), toolResult("c", "text")}, 0, 0, "a"},
		{"image-only is not a prompt", []llm.Message{user("a"), assistant("x"), image}, 0, 1, "a"},
		{"compaction summary is not a prompt", []llm.Message{summary, user("a")}, 0, 0, "a"},
	}
	for _, tc := range cases {
		p := locate(s, tc.msgs)
		if p.turn != tc.turn || p.step != tc.step || p.prompt != tc.prompt {
			t.Errorf("%s: got turn %d step %d prompt %q, want %d %d %q", tc.name, p.turn, p.step, p.prompt, tc.turn, tc.step, tc.prompt)
		}
	}
}

func TestLocateMatch(t *testing.T) {
	s := &Script{Turns: []Turn{
		{Steps: make([]Step, 2)},
		{Steps: make([]Step, 1), Match: "child:"},
		{Steps: make([]Step, 3)},
		{Steps: make([]Step, 1), Match: "other"},
	}}
	cases := []struct {
		name       string
		msgs       []llm.Message
		turn, step int
	}{
		{"an unmatched first prompt takes the first ordered turn", []llm.Message{user("a")}, 0, 0},
		{"a matching prompt takes its turn", []llm.Message{user("child: look")}, 1, 0},
		{"its tool loop stays in it", []llm.Message{user("child: look"), assistant("x"), toolResult("c", "")}, 1, 0},
		{"the first matching turn wins", []llm.Message{user("other child: x")}, 1, 0},
		{"matched prompts do not count", []llm.Message{user("a"), assistant("x"), user("child: y"), assistant("z"), user("b")}, 2, 0},
		{"ordered turns are capped among themselves", []llm.Message{user("a"), user("b"), user("c")}, 2, 0},
		{"a later match", []llm.Message{user("a"), user("other")}, 3, 0},
	}
	for _, tc := range cases {
		p := locate(s, tc.msgs)
		if p.turn != tc.turn || p.step != tc.step {
			t.Errorf("%s: got turn %d step %d, want %d %d", tc.name, p.turn, p.step, tc.turn, tc.step)
		}
	}
	only := &Script{Turns: []Turn{{Steps: make([]Step, 1), Match: "x"}, {Steps: make([]Step, 1), Match: "y"}}}
	if p := locate(only, []llm.Message{user("z")}); p.turn != 1 {
		t.Errorf("a prompt no turn matches in a script of matching turns: got turn %d, want the last", p.turn)
	}
}

func TestNextPieceKeepsRunesWhole(t *testing.T) {
	s := "héllo wörld ✓ 日本語 🎉!"
	for n := 1; n <= 9; n++ {
		var joined string
		for rest := s; rest != ""; {
			k := nextPiece(rest, n)
			piece := rest[:k]
			if !utf8.ValidString(piece) {
				t.Fatalf("chunk %d: piece %q splits a rune", n, piece)
			}
			if k > n && utf8.RuneCountInString(piece) != 1 {
				t.Fatalf("chunk %d: piece %q is longer than the chunk but not one rune", n, piece)
			}
			joined += piece
			rest = rest[k:]
		}
		if joined != s {
			t.Fatalf("chunk %d: pieces join to %q", n, joined)
		}
	}
}

func TestPrefix(t *testing.T) {
	cases := []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 0, ""}, {"abc", 2, "ab"}, {"abc", 9, "abc"},
		{"aé", 2, "a"}, {"aé", 3, "aé"}, {"日本", 4, "日"}, {"日本", 2, ""},
	}
	for _, tc := range cases {
		if got := prefix(tc.s, tc.n); got != tc.want {
			t.Errorf("prefix(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

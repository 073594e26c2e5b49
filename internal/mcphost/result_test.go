package mcphost

import (
	"strings"
	"testing"
	"unicode/utf8"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/tools"
)

func TestCapTextKeepsTheHeadAndImages(t *testing.T) {
	img := &llm.ImageBlock{}
	r := tools.Result{Content: []llm.Block{
		&llm.TextBlock{Text: strings.Repeat("a", 6)},
		img,
		&llm.TextBlock{Text: strings.Repeat("é", 4)}, // 8 bytes
		&llm.TextBlock{Text: "dropped"},
	}}
	capText(&r, 9)
	var texts []string
	var images int
	for _, b := range r.Content {
		switch b := b.(type) {
		case *llm.TextBlock:
			texts = append(texts, b.Text)
		case *llm.ImageBlock:
			images++
		}
	}
	if images != 1 || len(texts) != 3 || texts[0] != "aaaaaa" || texts[1] != "é" || !strings.Contains(texts[2], "was 21 bytes") {
		t.Fatalf("capped to %q, %d images", texts, images)
	}
	for _, s := range texts {
		if !utf8.ValidString(s) {
			t.Fatalf("cut inside a character: %q", s)
		}
	}
	small := tools.Result{Content: []llm.Block{&llm.TextBlock{Text: "short"}}}
	capText(&small, 9)
	if len(small.Content) != 1 {
		t.Fatalf("a result within the bound changed: %v", small.Content)
	}
}

package wire

import "testing"

func TestContentBlocksText(t *testing.T) {
	l := ContentBlocks{&TextBlock{Text: "a "}, &ImageBlock{MIMEType: "image/png"}, &TextBlock{Text: "b"}}
	if got := l.Text(); got != "a b" {
		t.Errorf("Text() = %q, want %q", got, "a b")
	}
	if got := ContentBlocks(nil).Text(); got != "" {
		t.Errorf("nil Text() = %q", got)
	}
}

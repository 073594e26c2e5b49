package wire

import "strings"

// Text returns the text of the blocks' text blocks, joined in order; the
// other blocks (images, and any kind added later) are left out.
func (l ContentBlocks) Text() string {
	var b strings.Builder
	for _, c := range l {
		if t, ok := c.(*TextBlock); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

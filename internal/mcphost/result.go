package mcphost

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"zot.dev/zot/internal/images"
	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/mcpclient"
	"zot.dev/zot/internal/tools"
)

// mapResult turns what an MCP server answered into zot's tool result:
// text as text, images as images (an image zot cannot pass on becomes a
// note), an embedded resource as its text (a binary one as a note), a
// resource link or audio as a note, isError kept, structured content as
// one more text block of JSON unless the content already holds it.
func mapResult(res *mcpclient.CallToolResult) tools.Result {
	out := tools.Result{IsError: res.IsError}
	var texts []string
	for i := range res.Content {
		c := &res.Content[i]
		switch c.Type {
		case mcpclient.ContentText:
			texts = append(texts, c.Text)
			out.Content = append(out.Content, &llm.TextBlock{Text: c.Text})
		case mcpclient.ContentImage:
			out.Content = append(out.Content, imageBlock(c.MIMEType, c.Data))
		case mcpclient.ContentAudio:
			out.Content = append(out.Content, &llm.TextBlock{Text: fmt.Sprintf("[audio %s, %d bytes, not shown]", orUnknown(c.MIMEType), len(c.Data))})
		case mcpclient.ContentResource:
			out.Content = append(out.Content, resourceBlock(c.Resource))
		case mcpclient.ContentResourceLink:
			out.Content = append(out.Content, &llm.TextBlock{Text: linkText(c)})
		default:
			out.Content = append(out.Content, &llm.TextBlock{Text: string(c.Raw)})
		}
	}
	if len(res.StructuredContent) > 0 && string(res.StructuredContent) != "null" {
		data, err := json.Marshal(res.StructuredContent)
		if err != nil {
			data = []byte(fmt.Sprintf("structured content that cannot be shown: %v", err))
		}
		if !containsJSON(texts, data) {
			out.Content = append(out.Content, &llm.TextBlock{Text: string(data)})
		}
	}
	if len(out.Content) == 0 {
		out.Content = []llm.Block{&llm.TextBlock{Text: "(no output)"}}
	}
	capText(&out, MaxResultText)
	return out
}

// MaxResultText bounds the text of one tool result the model gets, all
// its text blocks together: about 25,000 tokens, the bound other agents
// put on MCP results, beside the built-in tools' tens of KiB. A server
// answers up to 16 MiB in one message, which would fill the model's
// context at once and be sent again with every later request.
const MaxResultText = 100 << 10

// capText cuts the text blocks of r after max bytes in all (at a
// character boundary), drops the text blocks after that, and ends the
// content with a note of how much was left out. Images are kept.
func capText(r *tools.Result, max int) {
	total := 0
	for _, b := range r.Content {
		if t, ok := b.(*llm.TextBlock); ok {
			total += len(t.Text)
		}
	}
	if total <= max {
		return
	}
	room := max
	kept := r.Content[:0]
	for _, b := range r.Content {
		t, ok := b.(*llm.TextBlock)
		if !ok {
			kept = append(kept, b)
			continue
		}
		if room == 0 {
			continue
		}
		if len(t.Text) <= room {
			room -= len(t.Text)
			kept = append(kept, t)
			continue
		}
		cut := room
		for cut > 0 && !utf8.RuneStart(t.Text[cut]) {
			cut--
		}
		room = 0
		if cut > 0 {
			kept = append(kept, &llm.TextBlock{Text: t.Text[:cut]})
		}
	}
	r.Content = append(kept, &llm.TextBlock{Text: fmt.Sprintf(
		"\n[the result's text was %d bytes; only its first %d bytes are shown. Ask the tool for less, or for a part at a time, if it can.]", total, max)})
}

// imageBlock returns the image, or a note when it is not one zot can pass
// to a model (a format other than png, jpeg, gif and webp, or too big).
func imageBlock(mime string, data []byte) llm.Block {
	img, err := images.Check(mime, data)
	if err != nil {
		// Some servers put the base64 text itself in the data.
		if raw, derr := images.DecodeBase64(string(data)); derr == nil {
			if img2, err2 := images.Check(mime, raw); err2 == nil {
				return &img2
			}
		}
		return &llm.TextBlock{Text: fmt.Sprintf("[image %s, %d bytes, not shown: %v]", orUnknown(mime), len(data), err)}
	}
	return &img
}

// resourceBlock returns an embedded resource's text, or a note naming
// it when it is binary (an image is passed on as an image).
func resourceBlock(r *mcpclient.ResourceContents) llm.Block {
	if r == nil {
		return &llm.TextBlock{Text: "[empty resource]"}
	}
	if r.Blob == nil {
		head := "[resource " + r.URI
		if r.MIMEType != "" {
			head += " (" + r.MIMEType + ")"
		}
		return &llm.TextBlock{Text: head + "]\n" + r.Text}
	}
	if strings.HasPrefix(r.MIMEType, "image/") {
		if img, err := images.Check(r.MIMEType, r.Blob); err == nil {
			return &img
		}
	}
	return &llm.TextBlock{Text: fmt.Sprintf("[resource %s (%s), %d bytes of binary data, not shown]", r.URI, orUnknown(r.MIMEType), len(r.Blob))}
}

// linkText describes a resource link.
func linkText(l *mcpclient.Content) string {
	s := "[resource link " + l.URI
	if l.Name != "" {
		s += " " + l.Name
	}
	if l.MIMEType != "" {
		s += " (" + l.MIMEType + ")"
	}
	s += "]"
	if l.Description != "" {
		s += " " + l.Description
	}
	return s
}

// containsJSON reports whether one of texts is the same JSON value as
// data (servers often repeat their structured content as text).
func containsJSON(texts []string, data []byte) bool {
	var want any
	if json.Unmarshal(data, &want) != nil {
		return false
	}
	norm, _ := json.Marshal(want)
	for _, t := range texts {
		var got any
		if json.Unmarshal([]byte(t), &got) != nil {
			continue
		}
		if b, _ := json.Marshal(got); string(b) == string(norm) {
			return true
		}
	}
	return false
}

func orUnknown(mime string) string {
	if mime == "" {
		return "of unknown type"
	}
	return mime
}

// Package images recognises, checks and decodes the images zot accepts:
// PNG, JPEG, GIF and WebP, the formats every provider takes. It is the one
// place that tells an image's format from its bytes: prompts, tool results
// and transcripts all ask it.
package images

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

	"zot.dev/zot/internal/llm"
)

// MaxBytes is the largest image a prompt may carry, decoded.
const MaxBytes = 20 << 20

// Sniff returns the MIME type of a PNG, JPEG, GIF or WebP image recognised
// by its first bytes, or "" when head is none of them.
func Sniff(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(head, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "image/gif"
	case len(head) >= 12 && bytes.HasPrefix(head, []byte("RIFF")) && string(head[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

// Check sniffs and bounds one image. The claimed MIME type is ignored in
// favour of the bytes, but a claim of a non-image is refused.
func Check(claimed string, data []byte) (llm.ImageBlock, error) {
	if len(data) == 0 {
		return llm.ImageBlock{}, fmt.Errorf("empty image")
	}
	if len(data) > MaxBytes {
		return llm.ImageBlock{}, fmt.Errorf("image of %d bytes is over the %d-byte limit", len(data), MaxBytes)
	}
	if claimed != "" && !strings.HasPrefix(claimed, "image/") {
		return llm.ImageBlock{}, fmt.Errorf("mime_type %q is not an image type", claimed)
	}
	sniffed := Sniff(data)
	if sniffed == "" {
		return llm.ImageBlock{}, fmt.Errorf("image data is %s; only png, jpeg, gif and webp are accepted", http.DetectContentType(data))
	}
	return llm.ImageBlock{MIME: sniffed, Data: data}, nil
}

// DecodeBase64 decodes an image's base64 text, padded or not, in the
// standard alphabet (the URL-safe one is accepted too).
func DecodeBase64(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	if data, err := base64.RawStdEncoding.DecodeString(s); err == nil {
		return data, nil
	}
	data, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("image data is not valid base64: %w", err)
	}
	return data, nil
}

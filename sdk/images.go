package sdk

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

	"zot.dev/zot/internal/llm"
)

// MaxImageBytes is the largest image a prompt may carry, decoded.
const MaxImageBytes = 20 << 20

// acceptedImages are the formats every provider takes.
var acceptedImages = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// CheckImage sniffs and bounds one image. The claimed MIME type is
// ignored in favour of the bytes, but a claim of a non-image is refused.
func CheckImage(claimed string, data []byte) (llm.ImageBlock, error) {
	if len(data) == 0 {
		return llm.ImageBlock{}, fmt.Errorf("empty image")
	}
	if len(data) > MaxImageBytes {
		return llm.ImageBlock{}, fmt.Errorf("image of %d bytes is over the %d-byte limit", len(data), MaxImageBytes)
	}
	if claimed != "" && !strings.HasPrefix(claimed, "image/") {
		return llm.ImageBlock{}, fmt.Errorf("mime_type %q is not an image type", claimed)
	}
	sniffed := http.DetectContentType(data)
	if !acceptedImages[sniffed] {
		return llm.ImageBlock{}, fmt.Errorf("image data is %s; only png, jpeg, gif and webp are accepted", sniffed)
	}
	return llm.ImageBlock{MIME: sniffed, Data: data}, nil
}

// DecodeImageData decodes an image's base64 text, padded or not, in the
// standard alphabet (the URL-safe one is accepted too).
func DecodeImageData(s string) ([]byte, error) {
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

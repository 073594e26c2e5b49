package tools

import "bytes"

// sniffLen is how much of a file's start is examined to tell binary from
// text.
const sniffLen = 8 << 10

// sniffImage returns the MIME type of an image format recognised by its
// magic bytes (PNG, JPEG, GIF, WebP), or "" when head is none of them.
func sniffImage(head []byte) string {
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

// looksBinary reports whether head (a file's first bytes) holds a NUL byte
// within its first sniffLen bytes.
func looksBinary(head []byte) bool {
	if len(head) > sniffLen {
		head = head[:sniffLen]
	}
	return bytes.IndexByte(head, 0) >= 0
}

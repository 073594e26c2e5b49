package tools

import "bytes"

// sniffLen is how much of a file's start is examined to tell binary from
// text.
const sniffLen = 8 << 10

// looksBinary reports whether head (a file's first bytes) holds a NUL byte
// within its first sniffLen bytes.
func looksBinary(head []byte) bool {
	if len(head) > sniffLen {
		head = head[:sniffLen]
	}
	return bytes.IndexByte(head, 0) >= 0
}

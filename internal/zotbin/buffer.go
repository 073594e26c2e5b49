package zotbin

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that a subprocess's output copier and a test
// may use at once: exec writes a non-file Stdout or Stderr from its own
// goroutine. The zero value is ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

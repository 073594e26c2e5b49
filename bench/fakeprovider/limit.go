package fakeprovider

import (
	"errors"
	"fmt"
	"io"
)

// readAllLimit reads r to its end, failing when it holds more than limit
// bytes. size is how many bytes r announced (-1: unknown); a buffer of
// that size is made at once instead of grown.
func readAllLimit(r io.Reader, size, limit int64) ([]byte, error) {
	b := make([]byte, 0, min(max(size, 0), limit)+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if int64(len(b)) > limit {
			return nil, fmt.Errorf("body larger than %d bytes", limit)
		}
		if errors.Is(err, io.EOF) {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

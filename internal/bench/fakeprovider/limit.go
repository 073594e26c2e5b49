package fakeprovider

import (
	"fmt"
	"io"
)

// readAllLimit reads r to its end, failing when it holds more than limit
// bytes.
func readAllLimit(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("body larger than %d bytes", limit)
	}
	return b, nil
}

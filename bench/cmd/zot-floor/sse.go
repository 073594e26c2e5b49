package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// maxLine bounds one line of a provider stream.
const maxLine = 64 << 20

// errCut is a stream that ended before its end marker.
var errCut = errors.New("stream ended before its end marker")

// readSSE calls fn with the data of each event of an SSE stream until fn
// reports the end marker. Fields other than data are ignored.
func readSSE(body io.Reader, fn func(data []byte) (end bool, err error)) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var data []byte
	has := false
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if !has {
				continue
			}
			end, err := fn(data)
			if err != nil || end {
				return err
			}
			data, has = data[:0], false
			continue
		}
		v, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue
		}
		v, _ = bytes.CutPrefix(v, []byte(" "))
		if has {
			data = append(data, '\n')
		}
		data, has = append(data, v...), true
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading stream: %w", err)
	}
	return errCut
}

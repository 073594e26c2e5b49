package mcpclient

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// event is one server-sent event.
type event struct {
	name string // "message" when the stream does not name it
	data []byte
}

// readEvents reads the server-sent events of r (the text/event-stream
// format of the HTML standard) and calls fn with each, until r ends (nil)
// or fn returns false. An event whose data is over max bytes is skipped.
func readEvents(r io.Reader, max int, fn func(event) bool) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		name string
		data []byte
		over bool
		has  bool
	)
	for {
		line, err := readLine(br, max)
		if err != nil && !errors.Is(err, errLineTooLong) {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if errors.Is(err, errLineTooLong) {
			over, has = true, true
			continue
		}
		if len(line) == 0 { // the end of an event
			if has && !over {
				if name == "" {
					name = "message"
				}
				if !fn(event{name: name, data: data}) {
					return nil
				}
			}
			name, data, over, has = "", nil, false, false
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			name = string(value)
		case "data":
			if has && data != nil {
				data = append(data, '\n')
			}
			if len(data)+len(value) > max {
				over = true
			} else {
				data = append(data, value...)
				if data == nil {
					data = []byte{}
				}
			}
			has = true
		}
	}
}

// errLineTooLong is a line over the bound, read to its end and dropped.
var errLineTooLong = errors.New("line too long")

// readLine reads one line without its end (LF, CRLF or CR before LF).
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	long := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !long {
			if len(line)+len(chunk) > max+2 {
				long, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && (len(line) == 0 && !long):
			return nil, err
		case err != nil && !errors.Is(err, io.EOF):
			return nil, fmt.Errorf("reading the event stream: %w", err)
		}
		if long {
			return nil, errLineTooLong
		}
		return bytes.TrimRight(line, "\r\n"), nil
	}
}

package ndjson_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"zot.dev/zot/internal/ndjson"
)

type event struct{ N int }

func (e event) AppendJSON(b []byte) []byte {
	b = strconv.AppendInt(append(b, `{"n":`...), int64(e.N), 10)
	return append(b, '}')
}

func ExampleWriter() {
	ctx := context.Background()
	w := ndjson.NewWriter(os.Stdout, ndjson.WriterOptions{})
	for n := range 3 {
		if err := w.Wait(ctx); err != nil { // backpressure, outside any lock
			fmt.Println(err)
			return
		}
		w.Send(event{n}) // never blocks
	}
	if err := w.Close(ctx); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"n":0}
	// {"n":1}
	// {"n":2}
}

func ExampleReader() {
	in := "{\"a\":1}\r\n" + strings.Repeat("x", 100) + "\n{\"b\":2}"
	r := ndjson.NewReader(strings.NewReader(in), 64)
	for {
		line, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, ndjson.ErrLineTooLong) {
			fmt.Println("skipped:", err)
			continue
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s\n", line)
	}
	// Output:
	// {"a":1}
	// skipped: ndjson: line too long (over 64 bytes)
	// {"b":2}
}

package correlate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"zot.dev/zot/internal/correlate"
)

// A host calls a peer that answers each request on its own line; the
// reader of the peer's output resolves the calls.
func Example() {
	requests := make(chan string, 1) // stands for the peer's stdin
	calls := correlate.New[string, json.RawMessage](correlate.Options[string]{
		OnCancel: func(id string, why error) {
			requests <- fmt.Sprintf(`{"type":"cancel","id":%q}`, id)
		},
	})

	readerDone := make(chan struct{})
	go func() { // the peer and the reader of its output
		defer close(readerDone)
		for req := range requests {
			var r struct{ ID string }
			if err := json.Unmarshal([]byte(req), &r); err != nil {
				calls.Close(fmt.Errorf("reading the peer: %w", err))
				return
			}
			calls.Resolve(r.ID, json.RawMessage(`{"ok":true}`))
		}
		calls.Close(errors.New("the peer exited"))
	}()

	res, err := calls.Call(context.Background(), 5*time.Second, func(id string) error {
		requests <- fmt.Sprintf(`{"type":"ping","id":%q}`, id)
		return nil
	})
	fmt.Println(string(res), err)

	close(requests) // the peer exits
	<-readerDone
	_, err = calls.Call(context.Background(), 5*time.Second, func(string) error { return nil })
	fmt.Println(err)
	// Output:
	// {"ok":true} <nil>
	// starting a call: the peer exited
}

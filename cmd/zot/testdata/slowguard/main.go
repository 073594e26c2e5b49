// Command slowguard is a test extension written with zot.dev/zot/sdk/ext:
// a turn_start guard that blocks every model call, declared before Run,
// and an Init that takes a second (a database opened, a file read), far
// longer than the quiet after hello that zot takes as ready.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"zot.dev/zot/sdk/ext"
)

func main() {
	e := ext.New("slowguard", "1.0.0")
	e.InterceptTurnStart(func(ctx context.Context, step int) ext.TurnDecision {
		return ext.TurnDecision{Block: true, Reason: fmt.Sprintf("slowguard: no model calls (step %d)", step)}
	})
	e.Init(func(ctx context.Context, h ext.HostInfo) error {
		time.Sleep(time.Second)
		return nil
	})
	if err := e.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

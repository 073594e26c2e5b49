// Command hookguard is a test extension written with zot.dev/zot/sdk/ext:
// its Init takes a second (a database opened, a file read) and only then
// registers a turn_start guard that blocks every model call.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"zot.dev/zot/sdk/ext"
)

func main() {
	e := ext.New("hookguard", "1.0.0")
	e.Init(func(ctx context.Context, h ext.HostInfo) error {
		time.Sleep(time.Second)
		e.InterceptTurnStart(func(ctx context.Context, step int) ext.TurnDecision {
			return ext.TurnDecision{Block: true, Reason: fmt.Sprintf("hookguard: no model calls (step %d)", step)}
		})
		return nil
	})
	if err := e.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// Command twoguards is a test extension written with zot.dev/zot/sdk/ext:
// two turn_start guards, the first blocking every model call, the second
// allowing them (a guard added later, by another part of the program).
package main

import (
	"context"
	"fmt"
	"os"

	"zot.dev/zot/sdk/ext"
)

func main() {
	e := ext.New("twoguards", "1.0.0")
	e.InterceptTurnStart(func(ctx context.Context, step int) ext.TurnDecision {
		return ext.TurnDecision{Block: true, Reason: fmt.Sprintf("twoguards: no model calls (step %d)", step)}
	})
	e.InterceptTurnStart(func(ctx context.Context, step int) ext.TurnDecision {
		return ext.TurnDecision{}
	})
	if err := e.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

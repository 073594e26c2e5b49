// Command sdkext is a test extension written with zot.dev/zot/sdk/ext
// that exercises what the examples do not: a tool whose call the host
// gives up (its cancel reason is logged), a tool_call guard, a
// turn_start guard, an assistant_message rewrite, an event
// subscription that pushes a notice, and a panel that echoes what is
// typed into it (a burst of keys must arrive in order).
package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"time"

	"zot.dev/zot/sdk/ext"
)

func main() {
	e := ext.New("sdkext", "1.0.0")
	e.Tool("sdk_slow", "never answers before it is cancelled", nil,
		func(ctx context.Context, args json.RawMessage) ext.ToolResult {
			<-ctx.Done()
			e.Logf("sdk_slow cancelled: %v", context.Cause(ctx))
			return ext.Text("too late")
		}, ext.WithTimeout(300*time.Millisecond))
	e.InterceptToolCall(func(ctx context.Context, call ext.ToolCall) ext.ToolCallDecision {
		if call.Name == "bash" {
			return ext.ToolCallDecision{Block: true, Reason: "sdkext allows no bash"}
		}
		return ext.ToolCallDecision{}
	})
	e.InterceptTurnStart(func(ctx context.Context, step int) ext.TurnDecision {
		return ext.TurnDecision{Block: step > 3, Reason: "sdkext allows three steps"}
	})
	e.InterceptAssistantMessage(func(ctx context.Context, text string) ext.MessageDecision {
		return ext.MessageDecision{ReplaceText: strings.ReplaceAll(text, "SECRET", "[redacted]")}
	})
	e.On(ext.TurnEnd, func(ctx context.Context, ev *ext.Event) {
		_ = e.Notify(ext.LevelInfo, "turn ended: "+ev.Stop)
	})
	typed := ""
	e.Command("sdk_type", "a panel that shows what is typed", func(ctx context.Context, args string) ext.Response {
		return ext.OpenPanel(ext.Panel{ID: "typing", Title: "Type", Lines: []string{""}})
	})
	e.OnPanelKey(func(ctx context.Context, k ext.PanelKey) {
		switch k.Key {
		case "rune":
			typed += k.Text
		case "backspace":
			typed = typed[:max(0, len(typed)-1)]
		}
		_ = e.RenderPanel(ext.Panel{ID: k.PanelID, Title: "Type", Lines: []string{typed}})
	})
	if err := e.Run(context.Background()); err != nil {
		e.Logf("sdkext: %v", err)
		os.Exit(1)
	}
}

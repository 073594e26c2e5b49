// weather is an extension of tools written against upstream zot's Go
// extension package; only its import line names zot.dev/zot's
// compatibility package instead. The tests of cmd/zot build it and drive
// it through `zot rpc`. Its forecasts are made up.
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	ext "zot.dev/zot/sdk/ext/compat"
)

// pixelPNG is a 1×1 PNG in base64; pixel its bytes.
const pixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

var pixel, _ = base64.StdEncoding.DecodeString(pixelPNG)

var citySchema = json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)

func city(args json.RawMessage) (string, bool) {
	var in struct {
		City string `json:"city"`
	}
	if err := json.Unmarshal(args, &in); err != nil || strings.TrimSpace(in.City) == "" {
		return "", false
	}
	return in.City, true
}

func main() {
	e := ext.New("weather", "1.0.2")

	var current ext.ToolHandler = func(args json.RawMessage) ext.ToolResult {
		c, ok := city(args)
		if !ok {
			return ext.TextErrorResult(`weather: want {"city": "..."}`)
		}
		r := ext.TextResult(fmt.Sprintf("%s: %d°C, drizzle", c, 10+len(c)))
		r.ActivateTools = []string{"radar"}
		return r
	}
	e.Tool("weather", "Current weather for a city.", citySchema, current)

	e.Tool("weather_map", "A map of the weather over a city.", citySchema, func(args json.RawMessage) ext.ToolResult {
		c, ok := city(args)
		if !ok {
			return ext.TextErrorResult("weather_map: no city")
		}
		return ext.ToolResult{Content: []ext.ToolContent{
			ext.Text("map of " + c),
			ext.ImageBytes("image/png", pixel),
			ext.Image("image/png", pixelPNG),
			{Type: "image", MimeType: "image/png", Data: pixelPNG},
			{Type: "video", Text: "not a block zot takes"},
		}}
	})

	e.StructuredTool("forecast", "Three days of weather for a city.", citySchema,
		json.RawMessage(`{"type":"object","properties":{"days":{"type":"array"}}}`),
		func(args json.RawMessage) ext.ToolResult {
			c, _ := city(args)
			r := ext.MarkdownResult("# " + c + "\n\n- **Mon** rain\n- **Tue** sun")
			r.StructuredContent = json.RawMessage(`{"days":["rain","sun"]}`)
			return r
		})

	var alerts ext.InteractiveToolHandler = func(ctx context.Context, args json.RawMessage) ext.ToolResult {
		if ctx.Err() != nil {
			return ext.TextErrorResult("alerts: cancelled")
		}
		c, _ := city(args)
		return ext.ToolResult{Content: []ext.ToolContent{{Type: "text", Text: "no alerts for " + c, Format: "markdown"}}}
	}
	e.ToolWithOptions("alerts", "Weather alerts for a city.", citySchema, ext.ToolOptions{
		OutputSchema:          json.RawMessage(`{"type":"object"}`),
		Namespace:             "weather",
		NamespaceDescription:  "Weather services",
		NamespaceInstructions: "Prefer alerts over forecasts in storms.",
		Exposure:              "direct",
		Deferred:              false,
		Interactive:           false,
	}, alerts)

	e.DeferredTool("radar", "Radar over a city, once weather was asked.", citySchema, func(args json.RawMessage) ext.ToolResult {
		c, _ := city(args)
		return ext.TextResult("radar over " + c + ": clear")
	})

	e.InteractiveTool("pick_city", "Ask the user which city they mean.", json.RawMessage(`{"type":"object"}`),
		func(ctx context.Context, args json.RawMessage) ext.ToolResult {
			select {
			case <-ctx.Done():
				return ext.TextErrorResult("pick_city: cancelled")
			default:
				return ext.TextResult("the user picked Oslo")
			}
		})

	e.Tool("compare", "Compare the weather of two cities.", json.RawMessage(`{"type":"object"}`), func(args json.RawMessage) ext.ToolResult {
		r, err := e.CallTool(context.Background(), "weather", map[string]string{"city": "Oslo"})
		if err != nil {
			return ext.TextErrorResult("compare: " + err.Error())
		}
		return r
	})

	if err := e.Run(); err != nil {
		e.Logf("run: %v", err)
		os.Exit(1)
	}
}

package main

import (
	"github.com/urfave/cli/v3"

	"zot.dev/zot/internal/mcphost"
)

// mcpFlags are the flags of the MCP servers, read by print mode and rpc
// mode alike (pluginConfig).
func mcpFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "mcp-config", Usage: `MCP servers from this {"mcpServers": {...}} JSON file, over ./.zot/mcp.json and the zot home's mcp.json; repeatable, a later file winning per name`},
		&cli.BoolFlag{Name: "strict-mcp-config", Usage: "use only the MCP servers of --mcp-config, not ./.zot/mcp.json nor the zot home's mcp.json"},
		&cli.DurationFlag{Name: "mcp-start-timeout", Value: mcphost.DefaultStartTimeout, Usage: "how long the first prompt waits for MCP servers still starting"},
	}
}

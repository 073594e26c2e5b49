module zot.dev/zot

go 1.25.0

require (
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2
	github.com/urfave/cli/v3 v3.14.0
	golang.org/x/text v0.14.0
)

require golang.org/x/sys v0.38.0 // indirect

package client

// Must returns v, and panics when err is not nil: for programs and tests
// that treat any failure as fatal, as MustTool is for tools, so that a
// call reads as what it does:
//
//	c := client.Must(rpcclient.Start(ctx, rpcclient.Options{}))
//	events := client.Must(c.Prompt(ctx, "hello", nil))
//
// A program that handles errors checks them as usual.
func Must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

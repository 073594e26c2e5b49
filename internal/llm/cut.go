package llm

// CutReason is the Response.Reason of a length stop that cut a tool call.
const CutReason = "the output limit cut a tool call's arguments"

// MarkCut marks c as a call whose arguments the output limit cut short:
// its arguments become "{}" and ArgsError tells the model what happened
// and what to do, naming limit, the request parameter that set the limit
// ("max_tokens", "max_output_tokens", ...).
func (c *ToolCallBlock) MarkCut(limit string) {
	c.Cut = true
	c.Args = []byte("{}")
	c.ArgsError = "the arguments were cut off by the output limit (" + limit +
		") before they were complete, so the call did not run. Call the tool again with smaller arguments: " +
		"split a long text into several calls (write part of a file, then append the rest with edits)"
}

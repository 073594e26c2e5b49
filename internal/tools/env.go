package tools

import "strings"

// scrubEnv returns env without the variables that look like credentials:
// names that end in _API_KEY, _TOKEN, _SECRET, _SECRET_KEY or _ACCESS_KEY,
// start with ANTHROPIC_, OPENAI_ or GEMINI_, or are GOOGLE_API_KEY or
// ZOTCORE_RPC_TOKEN, compared without regard to case.
//
// It keeps secrets out of tool output by accident: without it a command
// such as env, printenv or set would copy the provider's key into the
// result, and from there into the transcript, the session file and the
// provider's logs. It is not a boundary. A command runs as the same user
// as zot, so it can still read zot's own environment in
// /proc/<zot's pid>/environ, zot's memory, and the auth file; only running
// the tools as another user or in a sandbox would stop that.
func scrubEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !isCredentialName(name) {
			out = append(out, kv)
		}
	}
	return out
}

func isCredentialName(name string) bool {
	n := strings.ToUpper(name)
	for _, suffix := range []string{"_API_KEY", "_TOKEN", "_SECRET", "_SECRET_KEY", "_ACCESS_KEY"} {
		if strings.HasSuffix(n, suffix) {
			return true
		}
	}
	for _, prefix := range []string{"ANTHROPIC_", "OPENAI_", "GEMINI_"} {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return n == "GOOGLE_API_KEY" || n == "ZOTCORE_RPC_TOKEN"
}

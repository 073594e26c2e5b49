package tools

import "strings"

// scrubEnv returns env without provider credentials: variables whose names
// end in _API_KEY, _TOKEN or _SECRET, start with ANTHROPIC_, OPENAI_ or
// GEMINI_, or are GOOGLE_API_KEY or ZOTCORE_RPC_TOKEN. Names are compared
// without regard to case.
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
	for _, suffix := range []string{"_API_KEY", "_TOKEN", "_SECRET"} {
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

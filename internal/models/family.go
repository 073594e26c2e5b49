package models

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"zot.dev/zot/internal/llm"
)

// The family rules: what zot derives from a model id the catalog does not
// hold, by the vendor's naming of its model generations. They decide how
// the model takes its reasoning (the request fields it accepts), which
// endpoint it needs for tools, and its limits where the whole generation
// shares them. Prices are never derived: an unknown id is unpriced. The
// table of rules is in docs/providers.md ("Model ids the catalog does not
// know").

// The reasoning levels of each kind of model, as its vendor documents
// them (the request types of @anthropic-ai/sdk 1.14.0 OutputConfig.effort,
// openai 7.57.0 ReasoningEffort and @google/genai 3.3.0 ThinkingLevel name
// the values; which model takes which is from the vendors' model pages).
var (
	// Claude with adaptive thinking: output_config.effort, or thinking
	// disabled for "none".
	anthropicEfforts = []string{"none", "low", "medium", "high", "xhigh", "max"}
	// A thinking budget (Claude 4.5 and earlier, Gemini 2.x): three budgets,
	// or none.
	budgetEfforts = []string{"none", "low", "medium", "high"}
	// o3, o4-mini.
	basicEfforts = []string{"low", "medium", "high"}
	// GPT-5 (August 2025).
	gpt5Efforts = []string{"minimal", "low", "medium", "high"}
	// GPT-5.1.
	gpt51Efforts = []string{"none", "low", "medium", "high"}
	// GPT-5.2 to 5.5.
	gpt52Efforts = []string{"none", "low", "medium", "high", "xhigh"}
	// GPT-5.6 and GPT-6, 6.1 Terra.
	gpt56Efforts = []string{"none", "low", "medium", "high", "xhigh", "max"}
	// GPT-6 Astra, GPT-6.1 Sol and GPT-6.2 and later refuse "none".
	gpt61SolEfforts = []string{"low", "medium", "high", "xhigh", "max"}
	// Gemini 3.x thinkingLevel.
	gemini3Efforts = []string{"minimal", "low", "medium", "high"}
	// Gemini 4 thinkingLevel.
	gemini4Efforts = []string{"low", "medium", "high", "xhigh"}
)

// version is a model generation, major.minor.
type version struct{ major, minor int }

// atLeast reports whether v is at least major.minor.
func (v version) atLeast(major, minor int) bool {
	return v.major > major || v.major == major && v.minor >= minor
}

// The id patterns, each compiled on its first use (never at start-up:
// the models of the catalog are placed when they are read).
var idPatterns = map[string]func() *regexp.Regexp{
	// claude-<tier>-<major>[-<minor>][-<date>], the naming since
	// Claude 4 (claude-opus-4-5, claude-sonnet-5-5, claude-fable-5).
	"claude": lazyRegexp(`^claude-[a-z]+-(\d+)(?:-(\d{1,2}))?(?:-\d{8})?$`),
	// claude-<major>[-<minor>]-<tier>..., the naming of Claude 3
	// (claude-3-5-sonnet-20241022, claude-3-7-sonnet-latest).
	"claude3": lazyRegexp(`^claude-(\d+)(?:-(\d{1,2}))?-[a-z]+`),
	// gpt-<major>[.<minor>][-<variant>] (gpt-5.6-sol, gpt-6.2-astra).
	"gpt": lazyRegexp(`^gpt-(\d+)(?:\.(\d+))?[a-z]?(?:-|$)`),
	// o<n>[-<variant>] (o3, o4-mini).
	"o": lazyRegexp(`^o\d+(?:-|$)`),
	// gemini-<major>[.<minor>][-<variant>] (gemini-2.5-flash,
	// gemini-4-neon).
	"gemini": lazyRegexp(`^gemini-(\d+)(?:\.(\d+))?(?:-|$)`),
}

// lazyRegexp returns a function that compiles expr on its first call.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// parseVersion returns the version captured by re in id.
func parseVersion(pattern, id string) (version, bool) {
	m := idPatterns[pattern]().FindStringSubmatch(id)
	if m == nil {
		return version{}, false
	}
	var v version
	v.major, _ = strconv.Atoi(m[1])
	if len(m) > 2 && m[2] != "" {
		v.minor, _ = strconv.Atoi(m[2])
	}
	return v, true
}

// byFamily returns the facts the family rules give an id of provider's
// family that the catalog does not hold, and false when no rule places it
// (then only the unknown-id defaults apply).
func byFamily(fam, id string) (Model, bool) {
	switch fam {
	case "anthropic":
		return claudeFamily(id)
	case "openai":
		return openaiFamily(id)
	case "gemini":
		return geminiFamily(id)
	}
	return Model{}, false
}

// claudeFamily: Claude Opus 4.6 and later and every Claude 5 take adaptive
// thinking with output_config.effort (a budget is refused); Claude 4.5
// and earlier take extended thinking with a budget only (adaptive thinking
// and output_config.effort are refused). From Claude 5.1 on, thinking
// blocks are bound to the conversation that produced them (preserved
// thinking, platform.claude.com/docs/en/build-with-claude/preserved-thinking).
func claudeFamily(id string) (Model, bool) {
	v, ok := parseVersion("claude", id)
	if !ok {
		if v, ok = parseVersion("claude3", id); !ok {
			return Model{}, false
		}
	}
	m := Model{Images: true}
	switch {
	case v.atLeast(4, 6):
		m.Reasoning, m.ReasoningControl = true, llm.ReasoningEffort
		m.ContextWindow, m.MaxOutput = 1_000_000, 128_000
		m.Efforts = anthropicEfforts
		if v.atLeast(5, 1) {
			m.BoundThinking = true
		}
	case v.atLeast(3, 7):
		m.Reasoning, m.ReasoningControl = true, llm.ReasoningBudget
		m.ContextWindow, m.MaxOutput = 200_000, 64_000
		m.Efforts = budgetEfforts
	default:
		m.ContextWindow, m.MaxOutput, m.Efforts = 200_000, 8_192, []string{}
	}
	return m, true
}

// openaiFamily: from GPT-5.6 on, Chat Completions refuses function tools
// with reasoning (the Responses API is needed); GPT-6.1 Sol and everything
// from GPT-6.2 on refuse reasoning_effort "none". GPT-5 to 5.5 and the
// o-series reason on either API; GPT-4 and earlier do not reason.
func openaiFamily(id string) (Model, bool) {
	if idPatterns["o"]().MatchString(id) {
		return Model{Reasoning: true, ReasoningControl: llm.ReasoningEffort, Images: true,
			ContextWindow: 200_000, MaxOutput: 100_000, Efforts: basicEfforts}, true
	}
	v, ok := parseVersion("gpt", id)
	if !ok {
		return Model{}, false
	}
	m := Model{Images: true}
	switch {
	case v.atLeast(5, 6):
		m.Reasoning, m.ReasoningControl, m.NoChatToolsReasoning = true, llm.ReasoningEffort, true
		m.ContextWindow, m.MaxOutput = 1_050_000, 128_000
		m.Efforts = gpt56Efforts
		// GPT-6 Astra and 6.1 Sol refuse none (apidog's GPT-6.1 Sol guide
		// after OpenAI's model page and GPT-6 migration guide; LaoZhang's
		// note of 2026-11-04), and so, by OpenAI's deployment checklist,
		// does 6.2.
		if v.atLeast(6, 2) || v == (version{6, 1}) && hasPart(id, "sol") || v == (version{6, 0}) && hasPart(id, "astra") {
			m.Efforts = gpt61SolEfforts
		}
	case v.major == 5:
		m.Reasoning, m.ReasoningControl = true, llm.ReasoningEffort
		m.ContextWindow, m.MaxOutput = 400_000, 128_000
		switch {
		case v.minor >= 2:
			m.Efforts = gpt52Efforts
		case v.minor == 1:
			m.Efforts = gpt51Efforts
		default:
			m.Efforts = gpt5Efforts
		}
	default:
		m.ContextWindow, m.MaxOutput, m.Efforts = 128_000, 16_384, []string{}
	}
	return m, true
}

// hasPart reports whether word is one of the dash-separated parts of id.
func hasPart(id, word string) bool {
	return slices.Contains(strings.Split(id, "-"), word)
}

// geminiFamily: Gemini 3 and later take thinkingConfig.thinkingLevel (a
// budget is refused); Gemini 2.x takes thinkingBudget, which a Pro model
// refuses at 0 (its thinking cannot be turned off: "Budget 0 is invalid.
// This model only works in thinking mode."); 1.x does not think.
func geminiFamily(id string) (Model, bool) {
	v, ok := parseVersion("gemini", id)
	if !ok {
		return Model{}, false
	}
	m := Model{Images: true, ContextWindow: 1_048_576, MaxOutput: 65_536}
	switch {
	case v.major >= 4:
		m.Reasoning, m.ReasoningControl, m.Efforts = true, llm.ReasoningEffort, gemini4Efforts
	case v.major == 3:
		m.Reasoning, m.ReasoningControl, m.Efforts = true, llm.ReasoningEffort, gemini3Efforts
	case v.major == 2:
		m.Reasoning, m.ReasoningControl, m.Efforts = true, llm.ReasoningBudget, budgetEfforts
		if hasPart(id, "pro") {
			m.Efforts = basicEfforts
		}
	default:
		m.MaxOutput, m.Efforts = 8_192, []string{}
	}
	return m, true
}

package gemini

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/httpcall"
)

// modelsPage is a page of GET /models: Model of the Gemini API
// (@google/genai 3.3.0 dist/genai.d.ts: name "models/<id>",
// inputTokenLimit, outputTokenLimit; the REST field
// supportedGenerationMethods is the SDK's supportedActions), and
// nextPageToken for the next page.
type modelsPage struct {
	Models []struct {
		Name                       string   `json:"name"`
		InputTokenLimit            int      `json:"inputTokenLimit"`
		OutputTokenLimit           int      `json:"outputTokenLimit"`
		SupportedGenerationMethods []string `json:"supportedGenerationMethods"`
	} `json:"models"`
	NextPageToken string `json:"nextPageToken"`
}

// maxModelPages bounds the pages ListModels reads.
const maxModelPages = 20

// ListModels returns the models the Gemini API lists for cfg's key that
// generate content (embedding models and the like are left out).
func ListModels(ctx context.Context, cfg Config) ([]llm.ListedModel, error) {
	base := strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/")
	if base == "" {
		base = defaultBaseURL
	}
	header := http.Header{}
	if cfg.APIKey != "" {
		header.Set("x-goog-api-key", cfg.APIKey)
	}
	var out []llm.ListedModel
	token := ""
	for range maxModelPages {
		u := base + "/models?pageSize=1000"
		if token != "" {
			u += "&pageToken=" + url.QueryEscape(token)
		}
		var page modelsPage
		decode := func(_ int, body []byte) (kind, message string) {
			if e, ok := parseError(body); ok {
				return e.Status, e.Message
			}
			return "", ""
		}
		if err := httpcall.GetJSON(ctx, providerName, u, header, cfg.Options, decode, &page); err != nil {
			return nil, err
		}
		for _, m := range page.Models {
			if len(m.SupportedGenerationMethods) > 0 && !slices.Contains(m.SupportedGenerationMethods, "generateContent") {
				continue
			}
			out = append(out, llm.ListedModel{ID: strings.TrimPrefix(m.Name, "models/"), ContextWindow: m.InputTokenLimit, MaxOutput: m.OutputTokenLimit})
		}
		if page.NextPageToken == "" {
			break
		}
		token = page.NextPageToken
	}
	return out, nil
}

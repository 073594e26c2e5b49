package anthropic

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/httpcall"
)

// modelsPage is a page of GET /v1/models: ModelInfo of @anthropic-ai/sdk
// 1.14.0 (resources/models.d.ts): id, max_input_tokens (the context
// window), max_tokens (the output limit), both nullable; has_more and
// last_id for the next page (the after_id parameter).
type modelsPage struct {
	Data []struct {
		ID             string `json:"id"`
		MaxInputTokens *int   `json:"max_input_tokens"`
		MaxTokens      *int   `json:"max_tokens"`
	} `json:"data"`
	HasMore bool   `json:"has_more"`
	LastID  string `json:"last_id"`
}

// maxModelPages bounds the pages ListModels reads.
const maxModelPages = 20

// ListModels returns the models Anthropic's models endpoint lists for
// cfg's key, every page of them.
func ListModels(ctx context.Context, cfg Config) ([]llm.ListedModel, error) {
	base := strings.TrimSuffix(endpoint(cfg.BaseURL), "/messages") + "/models"
	header := http.Header{}
	if cfg.APIKey != "" {
		header.Set("x-api-key", cfg.APIKey)
	}
	version := cfg.Version
	if version == "" {
		version = defaultVersion
	}
	header.Set("anthropic-version", version)
	var out []llm.ListedModel
	after := ""
	for range maxModelPages {
		u := base + "?limit=1000"
		if after != "" {
			u += "&after_id=" + url.QueryEscape(after)
		}
		var page modelsPage
		if err := httpcall.GetJSON(ctx, providerName, u, header, cfg.Options, decodeError, &page); err != nil {
			return nil, err
		}
		for _, m := range page.Data {
			l := llm.ListedModel{ID: m.ID}
			if m.MaxInputTokens != nil {
				l.ContextWindow = *m.MaxInputTokens
			}
			if m.MaxTokens != nil {
				l.MaxOutput = *m.MaxTokens
			}
			out = append(out, l)
		}
		if !page.HasMore || page.LastID == "" {
			break
		}
		after = page.LastID
	}
	return out, nil
}

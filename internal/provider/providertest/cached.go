package providertest

import (
	"encoding/json"
	"testing"

	"zot.dev/zot/internal/llm"
	"zot.dev/zot/internal/provider/reqbody"
)

// Build encodes a request body; cached says whether to use the caches of
// one provider instance, kept from call to call.
type Build func(req *llm.Request, cached bool) ([]byte, error)

// CachedMatchesFresh grows full's transcript one message at a time,
// building each request twice with the caches, then changes the text of
// the first message in place, cuts the transcript's front and drops the
// system prompt. At every step the body built with the caches must be byte
// for byte the one built without, and valid JSON; and the second build of
// the same transcript must take every message's encoding from the cache,
// as reused (the message cache's Reused for req) reports. full is
// modified.
func CachedMatchesFresh(t *testing.T, full *llm.Request, build Build, reused func(req *llm.Request) int) {
	t.Helper()
	check := func(req *llm.Request) {
		t.Helper()
		fresh, err := build(req, false)
		if err != nil {
			t.Fatal(err)
		}
		cached, err := build(req, true)
		if err != nil {
			t.Fatal(err)
		}
		if string(cached) != string(fresh) {
			t.Fatalf("body built with the caches differs:\n%s\nwithout:\n%s", cached, fresh)
		}
		if !json.Valid(cached) {
			t.Fatalf("body is not JSON: %s", cached)
		}
	}
	all := full.Messages
	for n := range len(all) + 1 {
		req := *full
		req.Messages = all[:n]
		check(&req)
		check(&req)
		if got := reused(&req); got != n {
			t.Fatalf("building %d messages again reused %d encodings, want all", n, got)
		}
	}
	changed := false
	for _, b := range all[0].Content {
		if tb, ok := b.(*llm.TextBlock); ok {
			tb.Text += " (changed in place)"
			changed = true
		}
	}
	if !changed {
		t.Fatal("the first message of the transcript has no text block to change")
	}
	check(full)
	full.Messages = all[len(all)/2:]
	check(full)
	full.System = ""
	check(full)
}

// BuildCached encodes a request body with the caches of one provider
// instance: a tool cache and one message cache.
type BuildCached func(req *llm.Request, tools *reqbody.ToolCache, msgs *reqbody.MessageCache) ([]byte, error)

// CachedMatchesFreshWith runs [CachedMatchesFresh] for a provider that
// keeps one [reqbody.ToolCache] and one [reqbody.MessageCache]: fresh builds
// a body without caches, cached with caches kept from call to call.
func CachedMatchesFreshWith(t *testing.T, full *llm.Request, fresh func(*llm.Request) ([]byte, error), cached BuildCached) {
	t.Helper()
	var tools reqbody.ToolCache
	var msgs reqbody.MessageCache
	build := func(req *llm.Request, useCaches bool) ([]byte, error) {
		if !useCaches {
			return fresh(req)
		}
		return cached(req, &tools, &msgs)
	}
	CachedMatchesFresh(t, full, build, func(*llm.Request) int { return msgs.Reused() })
}

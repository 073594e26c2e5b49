package bench

import (
	"errors"
	"flag"
	"io"
	"slices"
	"testing"
	"time"
)

func TestParseFlagsDefaults(t *testing.T) {
	cfg, err := ParseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	if cfg.Zot != "./bin/zot" || cfg.Floor != "./bin/zot-floor" || cfg.Reps != 5 || cfg.Deltas != 10_000 || cfg.Seq != 100 ||
		!slices.Equal(cfg.Providers, []string{ProviderAnthropic, ProviderOpenAI}) || len(cfg.Vs) != 0 || cfg.Timeout != want.Timeout ||
		!cfg.Extras || cfg.BigPrompt != 64<<20 || cfg.AbortAfter != 50*time.Millisecond {
		t.Errorf("defaults %+v", cfg)
	}
}

func TestParseFlags(t *testing.T) {
	cfg, err := ParseFlags([]string{"--zot", "z", "--floor", "f", "--vs", "a", "--vs", "b/a", "--reps", "3",
		"--provider", "openai", "--deltas", "200", "--seq", "7", "--timeout", "5s",
		"--extras=false", "--big-prompt", "4096", "--abort-after", "10ms"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Zot != "z" || cfg.Floor != "f" || !slices.Equal(cfg.Vs, []string{"a", "b/a"}) || cfg.Reps != 3 ||
		!slices.Equal(cfg.Providers, []string{ProviderOpenAI}) || cfg.Deltas != 200 || cfg.Seq != 7 || cfg.Timeout != 5*time.Second ||
		cfg.Extras || cfg.BigPrompt != 4096 || cfg.AbortAfter != 10*time.Millisecond {
		t.Errorf("parsed %+v", cfg)
	}
	var names []string
	for _, b := range cfg.binaries() {
		names = append(names, b.Name)
	}
	if want := []string{"floor", "zot", "vs a", "vs a #2"}; !slices.Equal(names, want) {
		t.Errorf("columns %q, want %q", names, want)
	}
}

func TestParseFlagsRejects(t *testing.T) {
	for _, args := range [][]string{
		{"--provider", "gemini"}, {"--reps", "0"}, {"--deltas", "0"}, {"--seq", "-1"},
		{"--timeout", "0s"}, {"--vs", ""}, {"extra"}, {"--zot", ""},
		{"--big-prompt", "100"}, {"--big-prompt", "1073741824"}, {"--abort-after", "-1s"}, {"--timeout", "1s", "--abort-after", "2s"},
	} {
		if _, err := ParseFlags(args, io.Discard); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
	if _, err := ParseFlags([]string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
}

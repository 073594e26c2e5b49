// Command zot-pages attributes the pages of a zot rpc's binary that are
// resident at the end of the benchmark's stream session (a ping, a short
// prompt, the long stream, with the user setup of zot-bench) to the
// binary's sections and to the packages whose code and read-only data lie
// on them. The binaries must keep their symbol table (built without -s;
// stripping moves nothing that is loaded).
//
//	zot-pages -zot /tmp/zot-sym -floor bin/zot-floor [-paused /tmp/zot-paused]
//
// With -paused, a build of the same tree whose main writes a line and
// sleeps when ZOT_PAGES_PAUSE is set, it also lists what was resident when
// main started: the runtime's start and the package inits. Linux only.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"time"

	"zot.dev/zot/bench"
)

func main() {
	cfg := bench.DefaultConfig()
	zot := flag.String("zot", "bin/zot", "the zot binary, with its symbol table")
	floor := flag.String("floor", "bin/zot-floor", "the floor program, with its symbol table")
	paused := flag.String("paused", "", "a build of zot that pauses at main when "+bench.PausedEnv+" is set")
	provider := flag.String("provider", bench.ProviderAnthropic, "the fake provider's format")
	top := flag.Int("top", 40, "packages listed")
	flag.Parse()
	cfg.Zot = *zot
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := run(ctx, cfg, *zot, *floor, *paused, *provider, *top); err != nil {
		fmt.Fprintln(os.Stderr, "zot-pages:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg bench.Config, zot, floor, paused, provider string, top int) error {
	after, err := measure(ctx, cfg, zot, provider, bench.PagesAfterWork)
	if err != nil {
		return fmt.Errorf("zot: %w", err)
	}
	fl, err := measure(ctx, cfg, floor, provider, bench.PagesAfterWork)
	if err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	atMain := &bench.Attribution{Text: map[string]int64{}, Sections: map[string]int64{}}
	if paused != "" {
		if atMain, err = measure(ctx, cfg, paused, provider, bench.PagesAtMain); err != nil {
			return fmt.Errorf("paused: %w", err)
		}
	}
	fmt.Printf("| section | size (KiB) | resident at main | after the work | floor: size | floor: after the work |\n|---|---:|---:|---:|---:|---:|\n")
	names := make([]string, 0, len(after.SectionSize))
	for n := range after.SectionSize {
		names = append(names, n)
	}
	sort.Strings(names)
	var tz, tm, tf int64
	for _, n := range names {
		fmt.Printf("| %s | %d | %d | %d | %d | %d |\n", n, kib(after.SectionSize[n]), kib(atMain.Sections[n]), kib(after.Sections[n]), kib(fl.SectionSize[n]), kib(fl.Sections[n]))
		tz, tm, tf = tz+after.Sections[n], tm+atMain.Sections[n], tf+fl.Sections[n]
	}
	fmt.Printf("| all | | %d | %d | | %d |\n\n", kib(tm), kib(tz), kib(tf))
	fmt.Printf("text blocks of 64 KiB resident: at main %d, after the work %d (floor %d)\n\n", atMain.Blocks, after.Blocks, fl.Blocks)
	fmt.Printf("| package | code (KiB) | on resident pages at main | after the work | read-only data after the work |\n|---|---:|---:|---:|---:|\n")
	rows := bench.PackageRows(atMain, after)
	var rest bench.PackageRow
	for i, r := range rows {
		if i < top {
			fmt.Printf("| %s | %.1f | %.1f | %.1f | %.1f |\n", r.Package, fk(r.Size), fk(r.AtMain), fk(r.AfterWork), fk(after.Rodata[r.Package]))
			continue
		}
		rest.Size, rest.AtMain, rest.AfterWork = rest.Size+r.Size, rest.AtMain+r.AtMain, rest.AfterWork+r.AfterWork
	}
	fmt.Printf("| %d others | %.1f | %.1f | %.1f | |\n", max(0, len(rows)-top), fk(rest.Size), fk(rest.AtMain), fk(rest.AfterWork))
	fmt.Printf("\nread-only data by package, after the work (KiB):")
	type kv struct {
		k string
		v int64
	}
	var ro []kv
	for k, v := range after.Rodata {
		ro = append(ro, kv{k, v})
	}
	slices.SortFunc(ro, func(a, b kv) int { return int(b.v - a.v) })
	for i, e := range ro {
		if i == 15 {
			break
		}
		fmt.Printf(" %s %.1f;", e.k, fk(e.v))
	}
	fmt.Println()
	return nil
}

func measure(ctx context.Context, cfg bench.Config, bin, provider string, snap func(context.Context, bench.Config, string, string) (*bench.Resident, error)) (*bench.Attribution, error) {
	r, err := snap(ctx, cfg, bin, provider)
	if err != nil {
		return nil, err
	}
	return bench.Attribute(bin, r)
}

func kib(n int64) int64 { return (n + 512) >> 10 }

func fk(n int64) float64 { return float64(n) / 1024 }

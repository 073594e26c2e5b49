package bench

import (
	"cmp"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"zot.dev/zot/bench/fakeprovider"
)

// PausedEnv is the variable a build made for PagesAtMain reads: set, the
// build's main writes one line to stdout and sleeps, so that what is
// resident then is what the runtime's start and the package inits touched.
// The product never reads it; only a scratch build with that hook does.
const PausedEnv = "ZOT_PAGES_PAUSE"

// Resident is a snapshot of the pages of a process's executable that are
// resident: their addresses, in ascending order.
type Resident struct {
	Exe   string
	Pages []uint64
}

// PagesAfterWork runs the work of a stream session of Run against bin (a
// ping, a short prompt, then the long stream, with the provider and setup
// of cfg) and returns the pages of bin resident at its end: the peak of a
// process is its steady state, and no page of the binary is given back.
func PagesAfterWork(ctx context.Context, cfg Config, bin, provider string) (*Resident, error) {
	h, done, err := pagesHarness(cfg)
	if err != nil {
		return nil, err
	}
	defer done()
	c, err := spawn(ctx, resolve(bin), h.args(provider), h.fx.cwd, h.env, cfg.Timeout)
	if err != nil {
		return nil, err
	}
	if err := c.ping(); err != nil {
		return nil, c.fail(fmt.Errorf("ping: %w", err))
	}
	if _, err := c.prompt(fakeprovider.PromptShort); err != nil {
		return nil, c.fail(fmt.Errorf("short prompt: %w", err))
	}
	if _, err := c.prompt(fakeprovider.PromptDeltas(cfg.Deltas)); err != nil {
		return nil, c.fail(fmt.Errorf("stream: %w", err))
	}
	r, err := readResidentPages(c.pid())
	if rerr := c.reap(cfg.Timeout); err == nil && rerr != nil {
		err = fmt.Errorf("after stdin closed: %w", rerr)
	}
	return r, err
}

// PagesAtMain starts bin, a build whose main pauses when PausedEnv is set,
// with the arguments of PagesAfterWork, waits for its line, and returns
// the pages of bin resident then: those the runtime's start and the
// package inits touched.
func PagesAtMain(ctx context.Context, cfg Config, bin, provider string) (*Resident, error) {
	h, done, err := pagesHarness(cfg)
	if err != nil {
		return nil, err
	}
	defer done()
	env := append(slices.Clip(h.env), PausedEnv+"=1")
	c, err := spawn(ctx, resolve(bin), h.args(provider), h.fx.cwd, env, cfg.Timeout)
	if err != nil {
		return nil, err
	}
	if err := c.arm(); err != nil {
		return nil, c.fail(err)
	}
	if _, err := c.readLine(); err != nil {
		return nil, c.fail(fmt.Errorf("waiting for the paused line: %w", err))
	}
	r, err := readResidentPages(c.pid())
	_ = c.reap(0)
	return r, err
}

// pagesHarness makes the fixture and fake provider of a run of cfg.
func pagesHarness(cfg Config) (*harness, func(), error) {
	fake, err := fakeprovider.New()
	if err != nil {
		return nil, nil, err
	}
	fake.Prerender(cfg.Deltas)
	dir, err := os.MkdirTemp("", "zot-pages-")
	if err != nil {
		fake.Close()
		return nil, nil, fmt.Errorf("creating the working directory: %w", err)
	}
	done := func() { fake.Close(); os.RemoveAll(dir) }
	fx, err := makeFixture(dir, cfg)
	if err != nil {
		done()
		return nil, nil, err
	}
	env := append(childEnv(), "ZOT_HOME="+fx.home)
	if cfg.Setup == SetupUser && cfg.TrustProject {
		if err := trustProject(context.Background(), resolve(cfg.Zot), fx.cwd, env); err != nil {
			done()
			return nil, nil, err
		}
	}
	return &harness{cfg: cfg, fake: fake, dir: dir, fx: fx, env: env}, done, nil
}

// PageSize is the size of the pages a Resident lists.
const PageSize = 4096

// Attribution is where the resident pages of an executable lie: bytes per
// section, and the bytes of text and read-only data per package.
type Attribution struct {
	// Sections maps an ELF section to its resident bytes; SectionSize to
	// its size.
	Sections, SectionSize map[string]int64
	// Text and Rodata map a package to the bytes of its symbols on
	// resident pages; TextSize to the size of its code.
	Text, Rodata, TextSize map[string]int64
	// Blocks is the number of resident 64 KiB blocks of text.
	Blocks int
}

// Attribute reads the sections and symbols of exe (a build that keeps its
// symbol table) and attributes the pages of r to them.
func Attribute(exe string, r *Resident) (*Attribution, error) {
	f, err := elf.Open(exe)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", exe, err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("reading the symbols of %s (build it without -s): %w", exe, err)
	}
	a := &Attribution{Sections: map[string]int64{}, SectionSize: map[string]int64{},
		Text: map[string]int64{}, Rodata: map[string]int64{}, TextSize: map[string]int64{}}
	resident := make(map[uint64]bool, len(r.Pages))
	for _, p := range r.Pages {
		resident[p] = true
	}
	var text, rodata *elf.Section
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Type == elf.SHT_NOBITS || s.Size == 0 {
			continue
		}
		a.SectionSize[s.Name] = int64(s.Size)
		a.Sections[s.Name] = overlap(resident, s.Addr, s.Addr+s.Size)
		switch s.Name {
		case ".text":
			text = s
		case ".rodata":
			rodata = s
		}
	}
	blocks := map[uint64]bool{}
	for _, p := range r.Pages {
		if text != nil && p >= text.Addr&^0xfff && p < text.Addr+text.Size {
			blocks[p>>16] = true
		}
	}
	a.Blocks = len(blocks)
	sort.Slice(syms, func(i, j int) bool { return syms[i].Value < syms[j].Value })
	for _, s := range syms {
		if s.Size == 0 {
			continue
		}
		end := s.Value + s.Size
		pkg := symbolPackage(s.Name)
		switch {
		case text != nil && s.Value >= text.Addr && end <= text.Addr+text.Size:
			a.TextSize[pkg] += int64(s.Size)
			if n := overlap(resident, s.Value, end); n > 0 {
				a.Text[pkg] += n
			}
		case rodata != nil && s.Value >= rodata.Addr && end <= rodata.Addr+rodata.Size:
			if n := overlap(resident, s.Value, end); n > 0 {
				a.Rodata[pkg] += n
			}
		}
	}
	return a, nil
}

// overlap is the number of bytes of [lo, hi) on resident pages.
func overlap(resident map[uint64]bool, lo, hi uint64) int64 {
	var n int64
	for p := lo &^ (PageSize - 1); p < hi; p += PageSize {
		if !resident[p] {
			continue
		}
		n += int64(min(hi, p+PageSize) - max(lo, p))
	}
	return n
}

// symbolPackage is the import path of a Go symbol's package: the name up
// to the first dot after its last slash, without a type's prefix or a
// generic function's type arguments.
func symbolPackage(name string) string {
	for _, prefix := range []string{"type:.eq.", "type:.hash.", "type:*", "type:", "go:itab.*", "go:itab."} {
		if strings.HasPrefix(name, prefix) {
			name = name[len(prefix):]
			break
		}
	}
	if strings.HasPrefix(name, "go:") {
		return "go:"
	}
	if i := strings.IndexAny(name, "[("); i >= 0 {
		name = name[:i]
	}
	slash := strings.LastIndexByte(name, '/')
	if i := strings.IndexByte(name[slash+1:], '.'); i >= 0 {
		name = name[:slash+1+i]
	}
	return name
}

// PackageRow is one package's resident bytes in two snapshots.
type PackageRow struct {
	Package                 string
	AtMain, AfterWork, Size int64
}

// PackageRows merges the text of two attributions, largest after the work
// first.
func PackageRows(atMain, after *Attribution) []PackageRow {
	var rows []PackageRow
	for pkg, n := range after.Text {
		rows = append(rows, PackageRow{Package: pkg, AtMain: atMain.Text[pkg], AfterWork: n, Size: after.TextSize[pkg]})
	}
	slices.SortFunc(rows, func(a, b PackageRow) int {
		return cmp.Or(cmp.Compare(b.AfterWork, a.AfterWork), strings.Compare(a.Package, b.Package))
	})
	return rows
}

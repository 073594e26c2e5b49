package bench

import "testing"

func TestSymbolPackage(t *testing.T) {
	for name, want := range map[string]string{
		"zot.dev/zot/internal/engine.(*Session).Run":           "zot.dev/zot/internal/engine",
		"zot.dev/zot/sdk/wire.map.init.2":                      "zot.dev/zot/sdk/wire",
		"slices.SortFunc[go.shape.[]zot.dev/zot/x.T,go.shape]": "slices",
		"type:.eq.net/http.Request":                            "net/http",
		"type:*crypto/tls.Conn":                                "crypto/tls",
		"go:string.*":                                          "go:",
		"runtime.mallocgc":                                     "runtime",
		"main.main":                                            "main",
		"vendor/golang.org/x/net/http2/hpack.init":             "vendor/golang.org/x/net/http2/hpack",
	} {
		if got := symbolPackage(name); got != want {
			t.Errorf("symbolPackage(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestOverlap(t *testing.T) {
	resident := map[uint64]bool{0x1000: true, 0x3000: true}
	for _, c := range []struct {
		lo, hi uint64
		want   int64
	}{
		{0x1000, 0x2000, 4096},
		{0x1800, 0x3800, 0x800 + 0x800},
		{0x2000, 0x3000, 0},
		{0x3ff0, 0x4010, 0x10},
	} {
		if got := overlap(resident, c.lo, c.hi); got != c.want {
			t.Errorf("overlap(%#x, %#x) = %d, want %d", c.lo, c.hi, got, c.want)
		}
	}
}

package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchStore fills a store with n sessions of m exchanges each.
func benchStore(b *testing.B, n, m int) *Store {
	b.Helper()
	dir := b.TempDir()
	s, err := Open(context.Background(), dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	var body strings.Builder
	body.WriteString(`{"session":{"version":1,"cwd":"/w","created":"2026-11-26T00:00:00Z"}}` + "\n")
	for i := range m {
		fmt.Fprintf(&body, `{"role":"user","time":"2026-11-26T00:00:00Z","content":[{"type":"text","text":"question %d"}]}`+"\n", i)
		fmt.Fprintf(&body, `{"role":"assistant","time":"2026-11-26T00:00:00Z","content":[{"type":"text","text":%q}]}`+"\n", strings.Repeat("answer ", 100))
	}
	for i := range n {
		if err := os.WriteFile(s.Path(fmt.Sprintf("s%05d", i)), []byte(body.String()), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkListWarm: a listing whose index is up to date (stats only).
func BenchmarkListWarm(b *testing.B) {
	s := benchStore(b, 200, 20)
	if _, err := s.List(context.Background(), Filter{}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := s.List(context.Background(), Filter{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListCold: a listing that rebuilds the index from every file.
func BenchmarkListCold(b *testing.B) {
	s := benchStore(b, 200, 20)
	for b.Loop() {
		os.Remove(filepath.Join(s.Dir(), indexName))
		if _, err := s.List(context.Background(), Filter{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFork: a fork of a session of 200 exchanges at its last
// prompt, in a store of 200 sessions (the fork's file written and synced,
// the index brought up to date).
func BenchmarkFork(b *testing.B) {
	s := benchStore(b, 200, 200)
	ctx := context.Background()
	if _, err := s.List(ctx, Filter{}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		f, err := s.Fork(ctx, "s00000", ForkPoint{})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.Remove(f.Path)
		b.StartTimer()
	}
}

// BenchmarkExportImport: a session of 200 exchanges exported and
// imported again.
func BenchmarkExportImport(b *testing.B) {
	s := benchStore(b, 1, 200)
	ctx := context.Background()
	var buf strings.Builder
	for b.Loop() {
		buf.Reset()
		if err := s.Export(ctx, "s00000", &buf); err != nil {
			b.Fatal(err)
		}
		im, err := s.Import(ctx, strings.NewReader(buf.String()), ImportOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.Remove(im.Path)
		b.StartTimer()
	}
}

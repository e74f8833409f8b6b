package file

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzBuild feeds arbitrary file contents through template rendering,
// decoding, error location and validation (reliability.md F10): build must
// never panic, must always return a configuration, and every problem names
// the file and says something.
func FuzzBuild(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*")
	more, _ := filepath.Glob("testdata/case022/*")
	for _, p := range append(seeds, more...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(filepath.Ext(p), b)
		}
	}
	f.Add(".yml", []byte("http:\n  routers:\n    x:\n      domains: 1\n      tls: {domains: [1]}\n"))
	f.Fuzz(func(t *testing.T, ext string, data []byte) {
		switch ext {
		case ".yml", ".yaml", ".toml", ".json":
		default:
			ext = ".yml"
		}
		if strings.Contains(string(data), "{{") && (strings.Contains(string(data), "until") || strings.Contains(string(data), "seq")) {
			t.Skip("template loops can be made arbitrarily long")
		}
		b := newBuilder(discard, false)
		s := b.build(context.Background(), []input{{path: "f" + ext, data: data}})
		if s.Config == nil || s.Config.HTTP == nil {
			t.Fatal("nil configuration")
		}
		for _, p := range s.Problems {
			if !strings.HasPrefix(p.Source, "f"+ext) || p.Message == "" {
				t.Errorf("problem without file or message: %+v", p)
			}
		}
	})
}

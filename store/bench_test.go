package store_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// BenchmarkSaveApplied saves a 10 000-router configuration (two versions
// alternating, so each save writes a revision), history 100.
func BenchmarkSaveApplied(b *testing.B) {
	var ms []*providers.Merged
	for v := range 2 {
		c := config.New()
		for i := range 10_000 {
			c.HTTP.Routers[fmt.Sprintf("r%d", i)] = &config.Router{RouterCommon: config.RouterCommon{Rule: fmt.Sprintf("Host(`h%d.example.com`)", i), Service: fmt.Sprintf("s%d", i%1000)}}
		}
		c.HTTP.Routers["r0"].Priority = v + 1
		m, err := providers.Merge(map[string]providers.Snapshot{"file": {Config: c}})
		if err != nil {
			b.Fatal(err)
		}
		ms = append(ms, m)
	}
	db := open(b, filepath.Join(b.TempDir(), "g.db"), 0)
	defer db.Close()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := db.SaveApplied(b.Context(), ms[i%2], time.Now(), nil); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

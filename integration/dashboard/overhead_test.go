package dashboard

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// cpuSeconds is the user+system CPU time of process pid, from
// /proc/<pid>/stat (fields 14 and 15, in clock ticks of 1/100 s).
func cpuSeconds(b *testing.B, pid int) float64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // after "pid (comm) "
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / 100
}

// BenchmarkObservabilityCPU measures the real binary's requests per
// CPU-second (user+system of the gantry process) for a fixed load, with
// no observability, with the JSON access log to a file, and with tracing
// sampled at 1.0 and 0.01 (to an in-test OTLP receiver), and reports each
// as a ratio to the run without. Run it alone, on a quiet machine:
//
//	go test -run '^$' -bench ObservabilityCPU -benchtime 1x ./integration/dashboard
func BenchmarkObservabilityCPU(b *testing.B) {
	rc := &receiver{}
	collector := httptest.NewServer(rc)
	defer collector.Close()
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer backend.Close()
	modes := []struct{ name, static string }{
		{"none", ""},
		{"accesslog-json", "accessLog:\n  format: json\n  filePath: %LOG%\n"},
		{"tracing-1.0", "tracing:\n  sampleRate: 1.0\n  otlp:\n    http:\n      endpoint: \"" + collector.URL + "/v1/traces\"\n"},
		{"tracing-0.01", "tracing:\n  sampleRate: 0.01\n  otlp:\n    http:\n      endpoint: \"" + collector.URL + "/v1/traces\"\n"},
	}
	const requests, workers = 20000, 4
	var base float64
	for _, m := range modes {
		dir := b.TempDir()
		harness.WriteFile(b, dir, "dynamic.yml", fmt.Sprintf("http:\n  routers:\n    app:\n      entryPoints: [web]\n      rule: PathPrefix(`/`)\n      service: app\n  services:\n    app:\n      loadBalancer:\n        servers:\n          - url: %q\n", backend.URL))
		extra := strings.ReplaceAll(m.static, "%LOG%", filepath.Join(b.TempDir(), "access.log"))
		g := harness.Start(b, fmt.Sprintf("entryPoints:\n  web:\n    address: %q\n  traefik:\n    address: %q\napi:\n  insecure: true\n%sproviders:\n  file:\n    directory: %q\n", harness.FreeAddr(b), harness.FreeAddr(b), extra, dir))
		url := g.URL(b, "web", "/x")
		harness.TryGet(b, 15*time.Second, url, harness.StatusIs(200))
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
		before := cpuSeconds(b, g.Pid())
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for range requests / workers {
					resp, err := client.Get(url)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
		}
		wg.Wait()
		cpu := cpuSeconds(b, g.Pid()) - before
		perCPU := requests / cpu
		if m.name == "none" {
			base = perCPU
		}
		b.ReportMetric(perCPU, m.name+"-req/cpu-s")
		b.Logf("%-15s %8.0f requests per CPU-second (%.2f CPU-s), ratio %.2f", m.name, perCPU, cpu, perCPU/base)
		g.Stop(b)
	}
}

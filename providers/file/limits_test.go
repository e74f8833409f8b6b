package file

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
)

// Issue 15: templates that would render without bound (nested ranges,
// values doubled in a loop, a huge printf width) stop at a limit with a
// problem naming the file, while the other files apply.
func TestTemplateBombsStopAtALimit(t *testing.T) {
	for name, tpl := range map[string]string{
		"nested ranges":      `{{range until 10000}}{{range until 10000}}x{{end}}{{end}}`,
		"nested silent":      `{{range until 10000}}{{range until 10000}}{{end}}{{end}}`,
		"range over int":     `{{range 100000000}}{{end}}`,
		"doubling join":      `{{$s := "aaaaaaaa"}}{{range until 64}}{{$s = join "" (list $s $s)}}{{end}}`,
		"doubling printf":    `{{$s := "aaaaaaaa"}}{{range until 64}}{{$s = printf "%s%s" $s $s}}{{end}}`,
		"growing replace":    `{{$s := "aaaaaaaa"}}{{range until 64}}{{$s = replace "a" "aaaaaaaaaa" $s}}{{end}}`,
		"printf width":       `{{printf "%0999999999d" 1}}`,
		"printf star":        `{{printf "%*d" 999999999 1}}`,
		"recursive template": `{{define "a"}}{{template "a" .}}{{template "a" .}}{{end}}{{template "a" .}}`,
	} {
		t.Run(name, func(t *testing.T) {
			b := newBuilder(discard, false)
			// Only a limit may stop these: the wall-clock timeout fires
			// first on a loaded machine under the race detector (seen in
			// CI), and is tested on its own below.
			b.limits.templateTimeout = 10 * time.Minute
			s := b.build(context.Background(), []input{
				{path: "good.yml", data: []byte(routersYAML(map[string]string{"a": "http://192.0.2.1"}))},
				{path: "bomb.yml", data: []byte(tpl)},
			})
			if len(s.Problems) != 1 || !strings.HasPrefix(s.Problems[0].Source, "bomb.yml") || !strings.Contains(s.Problems[0].Message, "template limit") {
				t.Fatalf("problems %v; want one on bomb.yml naming the template limit", problems(s))
			}
			if strings.Contains(s.Problems[0].Message, tickFunc) {
				t.Errorf("the problem names the internal step function the user never wrote: %v", problems(s))
			}
			if strings.Contains(s.Problems[0].Message, "templateTimeout") {
				t.Errorf("stopped by the timeout, not by a limit: %v", problems(s))
			}
			if _, ok := s.Config.HTTP.Routers["a"]; !ok {
				t.Errorf("good.yml not applied: routers %v", routerNames(s))
			}
		})
	}
}

// A render is bounded by providers.file.templateTimeout and stops as soon
// as its context is cancelled (SIGTERM during a render stays prompt).
func TestTemplateRenderCancelled(t *testing.T) {
	// Under the step limit, but slow: each of 99 000 iterations builds a
	// 1 MiB string.
	slow := `{{$s := printf "%0900d" 0}}{{range until 10}}{{$s = join "" (list $s $s)}}{{end}}` +
		`{{range until 99000}}{{$x := replace "0" "1" $s}}{{end}}`
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	// Uncancelled, the render would run for hours: returning with the
	// cancellation's error is the proof it stopped.
	_, err := render(ctx, "slow.yml", []byte(slow), 16<<20)
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("render: %v; want stopped by cancellation", err)
	}

	b := newBuilder(discard, false)
	b.limits.templateTimeout = 100 * time.Millisecond
	s := b.build(context.Background(), []input{{path: "slow.yml", data: []byte(slow)}})
	if len(s.Problems) != 1 || !strings.Contains(s.Problems[0].Message, "templateTimeout") {
		t.Errorf("problems %v; want the template timeout named", problems(s))
	}
}

// Issue 15: a file over maxFileSize, a value over maxValueSize and a
// template rendering over maxFileSize are each a problem naming the file;
// the file's last good content stays; the limits are configurable.
func TestSizeLimits(t *testing.T) {
	dir := t.TempDir()
	good := routersYAML(map[string]string{"big": "http://192.0.2.2"})
	path := filepath.Join(dir, "big.yml")
	write(t, path, good)
	p, err := New(static.File{Filename: path, MaxFileSize: 4096, MaxValueSize: 100}, discard)
	if err != nil {
		t.Fatal(err)
	}
	b := newBuilder(discard, false)
	b.limits = p.limits
	if s := b.build(context.Background(), []input{readFile(path, b.limits.fileSize)}); len(s.Problems) != 0 {
		t.Fatalf("good file: %v", problems(s))
	}
	header := "http:\n  middlewares:\n    h:\n      headers:\n        customRequestHeaders:\n          X-Big: " + strings.Repeat("v", 101) + "\n"
	for name, tc := range map[string]struct{ content, want string }{
		"file":      {good + "#" + strings.Repeat("x", 4096) + "\n", "over providers.file.maxFileSize (4096)"},
		"value":     {header, "http.middlewares.h.headers.customRequestHeaders.X-Big is 101 bytes, over providers.file.maxValueSize (100)"},
		"key":       {"http:\n  routers:\n    " + strings.Repeat("r", 101) + ":\n      rule: Host(`x`)\n      service: s\n", "over providers.file.maxValueSize (100)"},
		"rendered":  {`{{range until 5000}}x{{end}}`, "over providers.file.maxFileSize (4096)"},
		"in a list": {"tls:\n  certificates:\n    - certFile: " + strings.Repeat("c", 101) + "\n", "tls.certificates[0].certFile is 101 bytes"},
	} {
		t.Run(name, func(t *testing.T) {
			write(t, path, tc.content)
			s := b.build(context.Background(), []input{readFile(path, b.limits.fileSize)})
			if len(s.Problems) != 1 || !strings.HasPrefix(s.Problems[0].Source, path) || !strings.Contains(s.Problems[0].Message, tc.want) {
				t.Fatalf("problems %v; want one on %s saying %q", problems(s), path, tc.want)
			}
			if _, ok := s.Config.HTTP.Routers["big"]; !ok {
				t.Errorf("last good content not kept: routers %v", routerNames(s))
			}
		})
	}
	// The defaults are generous: 1 MiB values and 16 MiB files pass.
	if d := limitsOf(static.File{}); d.fileSize != 16<<20 || d.valueSize != 1<<20 || d.templateTimeout != 5*time.Second {
		t.Errorf("default limits %+v", d)
	}
}

// Issue 15: the wording for a file that never had usable content (created
// empty, then seen half-written) does not claim to keep anything.
func TestNeverGoodWording(t *testing.T) {
	b := newBuilder(discard, false)
	b.build(context.Background(), []input{{path: "new.yml"}})
	s := b.build(context.Background(), []input{{path: "new.yml", data: []byte("http:\n  routers:\n    a: [\n")}})
	if len(s.Problems) != 1 || strings.Contains(s.Problems[0].Message, "keeping") || !strings.Contains(s.Problems[0].Message, "nothing from this file is used") {
		t.Errorf("problems %v", problems(s))
	}
}

// Issue 23: each value under the per-value limit, but many of them: 60
// lines each building a value of max/16 × 1 000 bytes (at the default
// 16 MiB, 60 values of 16 MB reached 958 MB). The render's total is
// bounded (renderBudgetFactor × max): it stops with a problem naming the
// file, having allocated about the budget, and the other file applies.
func TestTemplateRenderBudget(t *testing.T) {
	const max = 1 << 20
	seed := strings.Repeat("0", max/1000-1)
	var tpl strings.Builder
	tpl.WriteString(`{{$seed := "` + seed + `"}}{{$k := printf "%01000d" 0}}` + "\n")
	for i := range 60 {
		fmt.Fprintf(&tpl, "{{$v%d := replace \"0\" $k $seed}}\n", i)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := render(context.Background(), "many.yml", []byte(tpl.String()), max)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "bytes in all") {
		t.Fatalf("render: %v; want stopped by the render's total budget", err)
	}
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(3*renderBudgetFactor*max); got > limit {
		t.Errorf("the render allocated %d bytes, want at most %d (its budget is %d)", got, limit, renderBudgetFactor*max)
	}

	b := newBuilder(discard, false)
	b.limits.fileSize = max
	s := b.build(context.Background(), []input{
		{path: "good.yml", data: []byte(routersYAML(map[string]string{"a": "http://192.0.2.1"}))},
		{path: "many.yml", data: []byte(tpl.String())},
	})
	if len(s.Problems) != 1 || !strings.HasPrefix(s.Problems[0].Source, "many.yml") || !strings.Contains(s.Problems[0].Message, "bytes in all") {
		t.Fatalf("problems %v; want one on many.yml naming the render's budget", problems(s))
	}
	if _, ok := s.Config.HTTP.Routers["a"]; !ok {
		t.Errorf("good.yml not applied: routers %v", routerNames(s))
	}
}

// Functions that build lists or copies count against the budget too.
func TestTemplateListBudget(t *testing.T) {
	for name, tpl := range map[string]string{
		"until in a range": `{{range until 1000}}{{$l := until 100000}}{{end}}`,
		"split runes":      `{{$s := printf "%01000d" 0}}{{$s = replace "0" "00000000000000000000" $s}}{{range until 200}}{{$l := split "" $s}}{{end}}`,
		"upper":            `{{$s := printf "%01000d" 0}}{{$s = replace "0" $s $s}}{{range until 200}}{{$u := upper $s}}{{end}}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := render(context.Background(), "l.yml", []byte(tpl), 1<<20)
			if err == nil || !strings.Contains(err.Error(), "bytes in all") {
				t.Fatalf("render: %v; want stopped by the render's total budget", err)
			}
		})
	}
}

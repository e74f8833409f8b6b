package file

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// manyRouters is a dynamic file of n routers and one service in format f
// ("yml", "toml" or "json"), about 70 bytes per router in YAML (issue 23's
// 80 000-router file is 5.7 MB).
func manyRouters(n int, f string) []byte {
	var b strings.Builder
	switch f {
	case "yml":
		b.WriteString("http:\n  routers:\n")
		for i := range n {
			fmt.Fprintf(&b, "    r%d:\n      rule: Host(`r%d.example.com`)\n      service: s\n", i, i)
		}
		b.WriteString("  services:\n    s:\n      loadBalancer:\n        servers:\n          - url: http://127.0.0.1:9000\n")
	case "bad.yml": // every router has an unknown field: each is left out with a problem
		b.WriteString("http:\n  routers:\n")
		for i := range n {
			fmt.Fprintf(&b, "    r%d:\n      rule: Host(`r%d.example.com`)\n      bogus: 1\n", i, i)
		}
	case "toml":
		for i := range n {
			fmt.Fprintf(&b, "[http.routers.r%d]\nrule = \"Host(`r%d.example.com`)\"\nservice = \"s\"\n", i, i)
		}
		b.WriteString("[[http.services.s.loadBalancer.servers]]\nurl = \"http://127.0.0.1:9000\"\n")
	case "json":
		b.WriteString(`{"http":{"routers":{`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "\n\"r%d\":{\"rule\":\"Host(`r%d.example.com`)\",\"service\":\"s\"}", i, i)
		}
		b.WriteString(`},"services":{"s":{"loadBalancer":{"servers":[{"url":"http://127.0.0.1:9000"}]}}}}}`)
	}
	return []byte(b.String())
}

// BenchmarkDecodeInvalidRouters decodes a file whose every router is in
// error (an unknown field): each is isolated and located, in time linear
// in the file's size (a parse of the whole file per object was quadratic).
func BenchmarkDecodeInvalidRouters(b *testing.B) {
	for _, n := range []int{5000, 10000, 20000} {
		data := manyRouters(n, "bad.yml")
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				bl := newBuilder(discard, false)
				_, probs, _ := bl.decodeFile(context.Background(), input{path: "bad.yml", data: data})
				if len(probs) != n || !strings.HasPrefix(probs[n-1].Source, "bad.yml:") {
					b.Fatalf("%d problems, want %d located ones (last %v)", len(probs), n, probs[len(probs)-1])
				}
			}
		})
	}
}

// BenchmarkDecodeRouters decodes one dynamic file of 20 000, 40 000 and
// 80 000 routers in each format the file provider reads, as a file change
// does (render, decode, limits, validation). Issue 23: each doubling must
// cost at most 2.3 times the time (linear in the file's size); yaml.v3's
// own map decoding was quadratic (1.8 CPU-s at 20 000, 7.1 at 40 000).
func BenchmarkDecodeRouters(b *testing.B) {
	for _, f := range []string{"yml", "toml", "json"} {
		for _, n := range []int{20000, 40000, 80000} {
			data := manyRouters(n, f)
			b.Run(fmt.Sprintf("%s/%d", f, n), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					bl := newBuilder(discard, false)
					c, probs, _ := bl.decodeFile(context.Background(), input{path: "many." + f, data: data})
					if len(probs) != 0 || c == nil || len(c.HTTP.Routers) != n {
						b.Fatalf("%d problems (%v), configuration %v", len(probs), probs, c != nil)
					}
				}
			})
		}
	}
}

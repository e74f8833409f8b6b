package dashboard

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/router"
)

func TestSimulate(t *testing.T) {
	f := newFixture(t, nil)
	h := f.api.Handler()
	tests := []struct {
		name       string
		body       string
		code       int
		winner     string
		candidates []string // router names in order, each "name:matched"
		errPart    string
	}{
		{
			name:   "host and path",
			body:   `{"method":"GET","url":"http://example.com/app/x","entryPoint":"web"}`,
			code:   200,
			winner: "web@file", candidates: []string{"web@file:true"},
		},
		{
			name:   "falls through to a path router",
			body:   `{"url":"http://other.example.org/whoami/1","entryPoint":"web"}`,
			code:   200,
			winner: "whoami@docker", candidates: []string{"whoami@docker:true"},
		},
		{
			name:   "host matches, path does not",
			body:   `{"url":"http://example.com/nothing","entryPoint":"web"}`,
			code:   200,
			winner: "", candidates: []string{"web@file:false", "whoami@docker:false"},
		},
		{
			name:   "https only sees TLS routers",
			body:   `{"url":"https://example.com/","entryPoint":"websecure"}`,
			code:   200,
			winner: "secure@file", candidates: []string{"secure@file:true"},
		},
		{
			name:   "Host header overrides the URL host",
			body:   `{"url":"http://127.0.0.1/app","headers":{"Host":"example.com"},"entryPoint":"web","clientIP":"192.0.2.1"}`,
			code:   200,
			winner: "web@file", candidates: []string{"web@file:true"},
		},
		{name: "entrypoint required", body: `{"url":"http://example.com/"}`, code: 400, errPart: "entryPoint: required, one of traefik, web, websecure"},
		{name: "unknown entrypoint", body: `{"url":"http://example.com/","entryPoint":"nope"}`, code: 400, errPart: `nope\" is not configured`},
		{name: "relative url", body: `{"url":"/app","entryPoint":"web"}`, code: 400, errPart: "not an absolute http(s) URL"},
		{name: "bad client ip", body: `{"url":"http://example.com/","entryPoint":"web","clientIP":"nope"}`, code: 400, errPart: "clientIP"},
		{name: "unknown field", body: `{"uri":"http://example.com/"}`, code: 400, errPart: "unknown field"},
		{name: "bad method", body: `{"method":"GE T","url":"http://example.com/","entryPoint":"web"}`, code: 400, errPart: "method"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := do(t, h, "POST", "/api/simulate", strings.NewReader(tt.body), "Content-Type", "application/json")
			if rec.Code != tt.code {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.code, rec.Body)
			}
			if tt.code != 200 {
				if !strings.Contains(rec.Body.String(), tt.errPart) {
					t.Errorf("error %s lacks %q", rec.Body, tt.errPart)
				}
				return
			}
			var ex router.Explanation
			if err := json.Unmarshal(rec.Body.Bytes(), &ex); err != nil {
				t.Fatal(err)
			}
			if ex.Winner != tt.winner {
				t.Errorf("winner %q, want %q (%s)", ex.Winner, tt.winner, rec.Body)
			}
			var got []string
			for _, c := range ex.Candidates {
				got = append(got, c.Router+":"+map[bool]string{true: "true", false: "false"}[c.Matched])
				if c.Reason == "" {
					t.Errorf("candidate %s has no reason", c.Router)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.candidates, ",") {
				t.Errorf("candidates %v, want %v (%s)", got, tt.candidates, rec.Body)
			}
		})
	}
}

func TestGoldenSimulate(t *testing.T) {
	f := newFixture(t, nil)
	rec := do(t, f.api.Handler(), "POST", "/api/simulate",
		strings.NewReader(`{"method":"GET","url":"http://example.com/nothing","entryPoint":"web","clientIP":"192.0.2.1","headers":{"X-Debug":"1"}}`),
		"Content-Type", "application/json")
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	golden(t, "simulate", rec.Body.Bytes())
}

package router

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
)

// optsBuilder records the hosts Compile hands to BuildTLS, reports
// tls.options "broken" as unbuildable, and says a request's connection
// negotiated the options named in its X-Negotiated header (the test's
// stand-in for the server's handshake).
type optsBuilder struct {
	nameBuilder
	hosts TLSHosts
}

func (b *optsBuilder) BuildTLS(_ context.Context, c *config.TLSConfiguration, hosts TLSHosts) (func(*tls.ClientHelloInfo) (*tls.Certificate, error), []error) {
	b.hosts = hosts
	var errs []error
	if c.Options["broken"] != nil {
		errs = append(errs, &TLSOptionsError{Name: "broken", Err: errors.New(`cipherSuites: unknown suite "TLS_NOT_A_SUITE"`)})
	}
	for _, byHost := range hosts {
		for _, o := range byHost {
			if o != DefaultTLSOptions && c.Options[o] == nil {
				errs = append(errs, &TLSOptionsError{Name: o, Missing: true, Err: errors.New("does not exist")})
			}
		}
	}
	errs = append(errs, &TLSWarning{Err: errors.New("tls.options.modern: cipherSuites: TLS_AES_128_GCM_SHA256 is a TLS 1.3 suite")})
	return nil, errs
}

func (b *optsBuilder) NegotiatedTLSOptions(r *http.Request) (string, bool) {
	n := r.Header.Get("X-Negotiated")
	return n, n != ""
}

func tlsReq(host, path, negotiated string) *http.Request {
	r := req("GET", "https://"+host+path, "X-Negotiated: "+negotiated)
	r.TLS = &tls.ConnectionState{ServerName: host}
	return r
}

// Case 038: per host and entrypoint, the options a host's HTTPS routers
// resolve to; conflicts and Host-less routers fall back to default with a
// warning naming the routers; options that cannot be built disable their
// routers (naming them) while their hosts keep them, so handshakes fail;
// and each route answers 421 on a connection that negotiated other
// options.
func TestTLSOptionsResolution(t *testing.T) {
	m := mergedOf(nil)
	add := func(name, rule, opts string, eps ...string) {
		m.Config.HTTP.Routers[name] = &config.Router{RouterCommon: config.RouterCommon{Rule: rule, Service: "svc@test", EntryPoints: eps}, TLS: &config.RouterTLSConfig{Options: opts}}
	}
	add("a@t", "Host(`a.example.com`)", "modern")
	add("b@t", "Host(`b.example.com`)", "")
	add("api@t", "Host(`api.example.com`) && PathPrefix(`/admin`)", "mtls", "web")
	add("api2@t", "Host(`api.example.com`)", "", "web")
	add("mtlsonly@t", "Host(`m.example.com`)", "mtls", "other")
	add("x@t", "Host(`x.example.com`)", "broken")
	add("any@t", "PathPrefix(`/health`)", "modern")
	add("gone@t", "Host(`gone.example.com`)", "nosuch")
	add("wild@t", "Host(`*.w.example.com`)", "modern")
	m.Config.TLS.Options = map[string]*config.TLSOptions{"modern": {MinVersion: "VersionTLS13"}, "mtls": {}, "broken": {CipherSuites: []string{"TLS_NOT_A_SUITE"}}}
	b := &optsBuilder{}
	tb := Compile(t.Context(), m, b, Options{EntryPoints: []EntryPoint{{Name: "web"}, {Name: "other"}}})

	// api and api2 conflict on web only: both default there; on other,
	// m.example.com keeps mtls.
	wantWeb := map[string]string{"a.example.com": "modern", "b.example.com": "default", "api.example.com": "default",
		"x.example.com": "broken", "gone.example.com": "nosuch", "*.w.example.com": "modern"}
	for h, o := range wantWeb {
		if got := b.hosts["web"][h]; got != o {
			t.Errorf("web %s: options %q, want %q", h, got, o)
		}
	}
	if got := b.hosts["other"]["m.example.com"]; got != "mtls" {
		t.Errorf("other m.example.com: %q, want mtls", got)
	}
	if _, ok := b.hosts["other"]["api.example.com"]; ok {
		t.Errorf("api.example.com listed on entrypoint other, where no router serves it")
	}
	rep := tb.Report()
	for name, want := range map[string]string{
		"api@t":  "routers ask for different TLS options for host api.example.com on entrypoint web: api2@t (default), api@t (mtls); all of them use the default options there",
		"api2@t": "routers ask for different TLS options for host api.example.com on entrypoint web",
		"any@t":  `tls.options "modern" cannot be applied: the rule has no Host`,
		"x@t":    `tls.options "broken" cannot be built (cipherSuites: unknown suite "TLS_NOT_A_SUITE")`,
		"gone@t": `tls.options "nosuch" does not exist`,
	} {
		st := rep.Routers[name]
		if st == nil || !strings.Contains(strings.Join(st.Errors, "\n"), want) {
			t.Errorf("router %s: errors %q, want one with %q", name, st.Errors, want)
		}
	}
	for name, status := range map[string]string{"api@t": StatusWarning, "api2@t": StatusWarning, "any@t": StatusWarning,
		"x@t": StatusDisabled, "gone@t": StatusDisabled, "a@t": StatusEnabled, "b@t": StatusEnabled} {
		if rep.Routers[name].Status != status {
			t.Errorf("router %s: status %s, want %s", name, rep.Routers[name].Status, status)
		}
	}
	if len(rep.TLS) != 1 || !strings.Contains(rep.TLS[0], "tls.options.broken") {
		t.Errorf("report TLS %q, want the broken options only", rep.TLS)
	}
	if len(rep.TLSWarnings) != 1 {
		t.Errorf("report TLS warnings %q, want 1", rep.TLSWarnings)
	}

	for _, c := range []struct {
		ep, host, path, negotiated string
		code                       int
		body                       string
	}{
		{"web", "a.example.com", "/", "modern", 200, "a@t"},
		{"web", "a.example.com", "/", "default", 421, ""},        // no SNI, or SNI b
		{"web", "b.example.com", "/", "modern", 421, ""},         // coalesced on a's connection
		{"web", "API.example.com", "/admin", "default", 200, ""}, // conflict: default wins
		{"web", "any.example.com", "/health", "default", 200, "any@t"},
		{"web", "a.example.com", "/health", "modern", 200, "a@t"},
		{"web", "c.example.com", "/health", "modern", 421, ""}, // any@t resolved to default
		{"web", "x.example.com", "/", "default", 421, ""},      // broken: the router is gone, its host is not default
		{"web", "q.w.example.com", "/", "default", 421, ""},
		{"web", "q.w.example.com", "/", "modern", 200, "wild@t"},
		{"web", "nothing.example.com", "/", "default", 404, ""},
		{"web", "a.example.com", "/", "modern (changed since the handshake)", 421, ""},
		{"other", "m.example.com", "/", "mtls", 200, "mtlsonly@t"},
		{"other", "m.example.com", "/", "default", 421, ""},
	} {
		w := &codeRecorder{discard: discard{h: http.Header{}}, code: 200}
		r := tlsReq(c.host, c.path, c.negotiated)
		tb.Handler(c.ep).ServeHTTP(w, r)
		name, _ := tb.Lookup(c.ep, r)
		if w.code != c.code || (c.body != "" && name != c.body) {
			t.Errorf("%s %s%s negotiated %q: %d via %q, want %d via %q", c.ep, c.host, c.path, c.negotiated, w.code, name, c.code, c.body)
		}
	}
}

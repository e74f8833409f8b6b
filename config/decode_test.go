package config

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func decodeFile(t *testing.T, name string) *Configuration {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	f, ok := FormatOf(name)
	if !ok {
		t.Fatalf("no format for %s", name)
	}
	c, err := Decode(data, f)
	if err != nil {
		t.Fatalf("Decode %s: %v", name, err)
	}
	return c
}

func ptr[T any](v T) *T { return &v }

// TestDecodeTraefikFile decodes a Traefik v3 dynamic file using every
// section and checks the values landed in the right fields.
func TestDecodeTraefikFile(t *testing.T) {
	c := decodeFile(t, "traefik-dynamic.yml")
	web := c.HTTP.Routers["web"]
	wantWeb := &Router{
		RouterCommon: RouterCommon{
			EntryPoints: []string{"web", "websecure"},
			Middlewares: []string{"strip", "secure-headers"},
			Service:     "app",
			Rule:        "Host(`example.com`) && PathPrefix(`/app`)",
			RuleSyntax:  "v3",
			Priority:    42,
		},
		TLS: &RouterTLSConfig{Options: "modern", CertResolver: "le", Domains: []Domain{
			{Main: "example.com", SANs: []string{"www.example.com", "api.example.com"}},
		}},
		Observability: &RouterObservability{AccessLogs: ptr(false), TraceVerbosity: "minimal"},
	}
	if d := cmp.Diff(wantWeb, web); d != "" {
		t.Errorf("router web (-want +got):\n%s", d)
	}
	lb := c.HTTP.Services["app"].LoadBalancer
	wantLB := &ServersLoadBalancer{
		Servers: []Server{
			{URL: "http://10.0.0.1:8080", Weight: ptr(3)},
			{URL: "http://10.0.0.2:8080/base", PreservePath: true},
		},
		PassHostHeader: ptr(false),
		Strategy:       "p2c",
		HealthCheck: &ServerHealthCheck{
			Path: "/health", Interval: Duration(10 * time.Second), Timeout: Duration(3 * time.Second),
			Headers: map[string]string{"X-Check": "gantry"},
		},
		PassiveHealthCheck: &PassiveServerHealthCheck{FailureWindow: Duration(30 * time.Second), MaxFailedAttempts: 3},
		Sticky:             &Sticky{Cookie: &Cookie{Name: "lb", Secure: true, HTTPOnly: true, SameSite: "lax", MaxAge: 3600}},
		ResponseForwarding: &ResponseForwarding{FlushInterval: Duration(250 * time.Millisecond)},
		ServersTransport:   "internal-ca",
	}
	if d := cmp.Diff(wantLB, lb); d != "" {
		t.Errorf("service app (-want +got):\n%s", d)
	}
	if lb.PassHost() || lb.Servers[1].EffectiveWeight() != 1 || lb.Servers[0].EffectiveWeight() != 3 {
		t.Errorf("PassHost %v, weights %d %d", lb.PassHost(), lb.Servers[0].EffectiveWeight(), lb.Servers[1].EffectiveWeight())
	}
	split := c.HTTP.Services["split"].Weighted
	if len(split.Services) != 2 || *split.Services[0].Weight != 9 || split.Sticky == nil || split.Sticky.Cookie == nil {
		t.Errorf("weighted: %+v", split)
	}
	if m := c.HTTP.Services["shadow"].Mirroring; m.Service != "app" || *m.MirrorBody || m.Mirrors[0] != (MirrorService{Name: "canary", Percent: 10}) {
		t.Errorf("mirroring: %+v", m)
	}
	if f := c.HTTP.Services["ha"].Failover; *f != (Failover{Service: "app", Fallback: "canary"}) {
		t.Errorf("failover: %+v", f)
	}
	mw := c.HTTP.Middlewares
	if got := mw["secure-headers"].Headers; got.STSSeconds != 31536000 || got.CustomResponseHeaders["X-Powered-By"] != "" || len(got.CustomResponseHeaders) != 1 {
		t.Errorf("headers: %+v", got)
	}
	if got := mw["limit"].RateLimit; got.Average != 100 || got.Period.D() != time.Minute || got.Burst != 50 {
		t.Errorf("rateLimit: %+v", got)
	}
	if got := mw["errors-page"].Errors; got.StatusRewrites["418"] != 404 || got.Status[0] != "500-599" {
		t.Errorf("errors: %+v", got)
	}
	st := c.HTTP.ServersTransports["internal-ca"]
	if st.ServerName != "backend.internal" || st.MaxIdleConnsPerHost != 50 || st.ForwardingTimeouts.ResponseHeaderTimeout.D() != time.Minute {
		t.Errorf("serversTransport: %+v", st)
	}
	if got := c.TLS.Options["modern"]; got.MinVersion != "VersionTLS13" || !got.SniStrict || got.ClientAuth.ClientAuthType != "VerifyClientCertIfGiven" {
		t.Errorf("tls options: %+v", got)
	}
	if got := c.TLS.Certificates[0]; got.CertFile != "/certs/example.crt" || got.Stores[0] != "default" {
		t.Errorf("tls certificates: %+v", got)
	}
	if got := c.TLS.Stores["default"].DefaultCertificate; got.KeyFile != "/certs/default.key" {
		t.Errorf("tls stores: %+v", got)
	}
	if errs := Validate(c); len(errs) != 0 {
		t.Errorf("Validate: %v", errs)
	}
}

// The same file in TOML decodes to the same configuration.
func TestDecodeTOMLMatchesYAML(t *testing.T) {
	y, tm := decodeFile(t, "traefik-dynamic.yml"), decodeFile(t, "traefik-dynamic.toml")
	if d := cmp.Diff(y, tm); d != "" {
		t.Errorf("YAML vs TOML (-yaml +toml):\n%s", d)
	}
}

// Encode then Decode as JSON gives back the same configuration.
func TestJSONRoundTrip(t *testing.T) {
	c := decodeFile(t, "traefik-dynamic.yml")
	b, err := Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(b, JSON)
	if err != nil {
		t.Fatalf("Decode(Encode(c)): %v\n%s", err, b)
	}
	if d := cmp.Diff(c, back); d != "" {
		t.Errorf("JSON round trip (-before +after):\n%s", d)
	}
	if !strings.Contains(string(b), `"interval": "10s"`) {
		t.Errorf("durations should encode as Go duration strings:\n%s", b)
	}
}

func TestDecodeFieldNamesCaseInsensitive(t *testing.T) {
	c, err := Decode([]byte("http:\n  routers:\n    R1:\n      entrypoints: [web]\n      RULE: Host(`a`)\n      Service: s\n"), YAML)
	if err != nil {
		t.Fatal(err)
	}
	r := c.HTTP.Routers["R1"]
	if r == nil || r.Rule != "Host(`a`)" || r.Service != "s" || len(r.EntryPoints) != 1 {
		t.Errorf("got %+v, want fields matched case-insensitively and the name kept", r)
	}
}

func TestDecodeEmptyBlocks(t *testing.T) {
	y := "http:\n  routers:\n    r:\n      rule: Host(`a`)\n      service: s\n      tls: {}\n"
	tm := "[http.routers.r]\nrule = \"Host(`a`)\"\nservice = \"s\"\n[http.routers.r.tls]\n"
	for f, src := range map[Format]string{YAML: y, TOML: tm} {
		c, err := Decode([]byte(src), f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if c.HTTP.Routers["r"].TLS == nil {
			t.Errorf("%s: an empty tls block must enable TLS (non-nil)", f)
		}
	}
	for _, src := range []string{"", "# only a comment\n"} {
		c, err := Decode([]byte(src), YAML)
		if err != nil || c == nil || len(Validate(c)) != 0 {
			t.Errorf("empty YAML %q: %v, %v", src, c, err)
		}
	}
}

// YAML mappings with non-string keys (unquoted status codes) decode; they
// used to fail with "json: unsupported type: map[interface {}]interface {}".
func TestDecodeNonStringKeys(t *testing.T) {
	c, err := Decode([]byte("http:\n  middlewares:\n    e:\n      errors:\n        status: [\"500\"]\n        statusRewrites:\n          418: 404\n          500: 503\n"), YAML)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.HTTP.Middlewares["e"].Errors.StatusRewrites; got["418"] != 404 || got["500"] != 503 {
		t.Errorf("statusRewrites = %v", got)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		f    Format
		in   string
		want string
	}{
		{"unknown field", YAML, "http:\n  routers:\n    r:\n      rules: x\n", `unknown field "rules"`},
		// Issue 23: the path names the router ("field
		// http.routers.priority" lost it), and list indexes.
		{"wrong type", YAML, "http:\n  routers:\n    a:\n      priority: 1\n    myrouter:\n      priority: high\n", "field http.routers.myrouter.priority: cannot use string as int"},
		{"no Go type name", YAML, "http:\n  routers:\n    r:\n      tls: yes-please\n", "field http.routers.r.tls: cannot use string as a section"},
		{"wrong type in a list", YAML, "http:\n  services:\n    s:\n      loadBalancer:\n        servers:\n          - url: http://a\n          - url: {x: 1}\n",
			"field http.services.s.loadBalancer.servers[1].url: cannot use object as string"},
		{"wrong type json", JSON, `{"http":{"routers":{"my.router":{"priority":"x"}}}}`, "field http.routers.my.router.priority: cannot use string as int"},
		{"yaml syntax names the line", YAML, "http:\n  routers:\n    r: [\n", "yaml: line"},
		{"toml syntax names the line", TOML, "[http.routers.r]\nrule = \n", "toml: "},
		{"top level not a mapping", YAML, "- a\n- b\n", "top level must be a mapping"},
		{"bad duration", YAML, "http:\n  services:\n    s:\n      loadBalancer:\n        healthCheck:\n          interval: soon\n", `invalid duration "soon"`},
		{"unknown format", Format("xml"), "<a/>", `unknown format "xml"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.in), tt.f)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestFormatOf(t *testing.T) {
	for name, want := range map[string]Format{"a.yml": YAML, "B.YAML": YAML, "c.toml": TOML, "d.json": JSON} {
		if got, ok := FormatOf(name); !ok || got != want {
			t.Errorf("FormatOf(%s) = %s, %v; want %s", name, got, ok, want)
		}
	}
	if _, ok := FormatOf("e.txt"); ok {
		t.Errorf("FormatOf(e.txt) ok, want false")
	}
}

func TestDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{`"10s"`, 10 * time.Second, false},
		{`"1m30s"`, 90 * time.Second, false},
		{`10`, 10 * time.Second, false},
		{`"10"`, 10 * time.Second, false},
		{`1.5`, 1500 * time.Millisecond, false},
		{`""`, 0, false},
		{`null`, 0, false},
		{`"ten"`, 0, true},
	}
	for _, tt := range tests {
		var d Duration
		err := d.UnmarshalJSON([]byte(tt.in))
		if (err != nil) != tt.err || (!tt.err && d.D() != tt.want) {
			t.Errorf("UnmarshalJSON(%s) = %v, %v; want %v (error %v)", tt.in, d.D(), err, tt.want, tt.err)
		}
	}
	b, _ := Duration(1500 * time.Millisecond).MarshalJSON()
	if string(b) != `"1.5s"` {
		t.Errorf("MarshalJSON = %s, want \"1.5s\"", b)
	}
}

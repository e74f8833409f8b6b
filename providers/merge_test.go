package providers_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// case011 builds the snapshots of case 011: a file router using a Docker
// middleware, and a Docker router using file middlewares, a local chain and
// an unqualified local middleware.
func case011() map[string]providers.Snapshot {
	file := config.New()
	file.HTTP.Middlewares["headers-std"] = &config.Middleware{Headers: &config.Headers{CustomResponseHeaders: map[string]string{"X-Std": "1"}}}
	file.HTTP.Routers["nas"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "Host(`nas.example.com`)", Service: "nas", Middlewares: []string{"sso@docker"}}}
	file.HTTP.Services["nas"] = &config.Service{LoadBalancer: &config.ServersLoadBalancer{Servers: []config.Server{{URL: "http://192.0.2.20:5000"}}}}
	file.TLS.Options["default"] = &config.TLSOptions{MinVersion: "VersionTLS12"}
	file.TLS.Options["modern"] = &config.TLSOptions{MinVersion: "VersionTLS13"}
	file.TLS.Certificates = []*config.CertAndStores{{Certificate: config.Certificate{CertFile: "/c.pem", KeyFile: "/k.pem"}}}

	docker := config.New()
	docker.HTTP.Routers["app"] = &config.Router{
		RouterCommon: config.RouterCommon{
			Rule:        "Host(`app.example.com`)",
			Service:     "app",
			Middlewares: []string{"headers-std@file", "auth@file", "local-chain"},
		},
		TLS: &config.RouterTLSConfig{Options: "modern@file"},
	}
	docker.HTTP.Routers["sso"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "Host(`sso`)", Service: "sso"}, TLS: &config.RouterTLSConfig{Options: "strict"}}
	docker.HTTP.Middlewares["local-chain"] = &config.Middleware{Chain: &config.Chain{Middlewares: []string{"strip@docker", "errs"}}}
	docker.HTTP.Middlewares["strip"] = &config.Middleware{StripPrefix: &config.StripPrefix{Prefixes: []string{"/x"}}}
	docker.HTTP.Middlewares["errs"] = &config.Middleware{Errors: &config.ErrorPage{Service: "pages", Status: []string{"500-599"}}}
	docker.HTTP.Middlewares["sso"] = &config.Middleware{ForwardAuth: &config.ForwardAuth{Address: "http://sso:9091/verify"}}
	docker.HTTP.Services["app"] = &config.Service{LoadBalancer: &config.ServersLoadBalancer{
		Servers: []config.Server{{URL: "http://10.0.0.2:80"}}, ServersTransport: "insecure",
	}, Middlewares: []string{"strip"}}
	docker.HTTP.Services["split"] = &config.Service{Weighted: &config.WeightedRoundRobin{Services: []config.WRRService{{Name: "app"}, {Name: "nas@file"}}}}
	docker.HTTP.Services["mirror"] = &config.Service{Mirroring: &config.Mirroring{Service: "app", Mirrors: []config.MirrorService{{Name: "shadow", Percent: 10}}}}
	docker.HTTP.Services["fo"] = &config.Service{Failover: &config.Failover{Service: "app", Fallback: "nas@file"}}
	docker.TLS.Certificates = []*config.CertAndStores{{Certificate: config.Certificate{CertFile: "/d.pem", KeyFile: "/dk.pem"}}}
	return map[string]providers.Snapshot{
		"file":   {Config: file, Problems: []providers.Problem{{Provider: "file", Source: "/x.yml:1:1", Message: "m"}}},
		"docker": {Config: docker},
	}
}

func TestMergeQualifiesNamesAndReferences(t *testing.T) {
	snaps := case011()
	before, _ := json.Marshal(snaps["docker"].Config)
	m, err := providers.Merge(snaps)
	if err != nil {
		t.Fatal(err)
	}
	h := m.Config.HTTP
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"docker router middlewares", h.Routers["app@docker"].Middlewares, []string{"headers-std@file", "auth@file", "local-chain@docker"}},
		{"docker router service", h.Routers["app@docker"].Service, "app@docker"},
		{"qualified tls options kept", h.Routers["app@docker"].TLS.Options, "modern@file"},
		{"local tls options qualified", h.Routers["sso@docker"].TLS.Options, "strict@docker"},
		{"file router uses docker middleware", h.Routers["nas@file"].Middlewares, []string{"sso@docker"}},
		{"chain", h.Middlewares["local-chain@docker"].Chain.Middlewares, []string{"strip@docker", "errs@docker"}},
		{"errors service", h.Middlewares["errs@docker"].Errors.Service, "pages@docker"},
		{"serversTransport", h.Services["app@docker"].LoadBalancer.ServersTransport, "insecure@docker"},
		{"service middlewares", h.Services["app@docker"].Middlewares, []string{"strip@docker"}},
		{"weighted", h.Services["split@docker"].Weighted.Services, []config.WRRService{{Name: "app@docker"}, {Name: "nas@file"}}},
		{"mirroring service", h.Services["mirror@docker"].Mirroring.Service, "app@docker"},
		{"mirrors", h.Services["mirror@docker"].Mirroring.Mirrors, []config.MirrorService{{Name: "shadow@docker", Percent: 10}}},
		{"failover", []string{h.Services["fo@docker"].Failover.Service, h.Services["fo@docker"].Failover.Fallback}, []string{"app@docker", "nas@file"}},
		{"tls default option unqualified", m.Config.TLS.Options["default"] != nil, true},
		{"tls option qualified", m.Config.TLS.Options["modern@file"] != nil, true},
		{"certificates concatenated in provider order", len(m.Config.TLS.Certificates), 2},
		{"cert origins", m.TLSOrigins, providers.TLSOrigins{Certificates: []string{"docker", "file"}, DefaultOptions: "file"}},
		{"problems pass through", len(m.Problems), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, tc.got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	after, _ := json.Marshal(snaps["docker"].Config)
	if string(before) != string(after) {
		t.Errorf("Merge modified its input snapshot:\nbefore %s\nafter  %s", before, after)
	}
}

func TestMergeProblems(t *testing.T) {
	a, b := config.New(), config.New()
	a.TLS.Options["default"] = &config.TLSOptions{}
	b.TLS.Options["default"] = &config.TLSOptions{}
	b.HTTP.Routers["bad@name"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "Path(`/`)", Service: "s"}}
	b.HTTP.Routers["ok"] = &config.Router{RouterCommon: config.RouterCommon{Rule: "Path(`/`)", Service: "s"}}
	m, err := providers.Merge(map[string]providers.Snapshot{"a": {Config: a}, "b": {Config: b}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Config.TLS.Options["default"]; ok {
		t.Errorf("default TLS options from two providers kept, want left out")
	}
	if _, ok := m.Config.HTTP.Routers["ok@b"]; !ok {
		t.Errorf("router ok@b missing")
	}
	if len(m.Config.HTTP.Routers) != 1 {
		t.Errorf("got routers %v, want only ok@b", m.Config.HTTP.Routers)
	}
	var msgs []string
	for _, p := range m.Problems {
		msgs = append(msgs, p.String())
	}
	want := []string{
		`b: router bad@name: router name "bad@name" contains '@', which is reserved for provider qualification`,
		`aggregator: tls options default: TLS options "default" defined by more than one provider (a, b); none is used`,
	}
	if d := cmp.Diff(want, msgs); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
}

func TestHashIsCanonical(t *testing.T) {
	build := func(order []string) *config.Configuration {
		c := config.New()
		for _, n := range order {
			c.HTTP.Routers[n] = &config.Router{RouterCommon: config.RouterCommon{Rule: "Host(`" + n + "`)", Service: "s"}}
		}
		return c
	}
	h1, err := providers.Hash(build([]string{"a", "b", "c", "d", "e"}))
	if err != nil {
		t.Fatal(err)
	}
	h2, _ := providers.Hash(build([]string{"e", "d", "c", "b", "a"}))
	if h1 != h2 {
		t.Errorf("hash depends on insertion order: %s vs %s", h1, h2)
	}
	m1, _ := providers.Merge(map[string]providers.Snapshot{"a": {Config: &config.Configuration{}}})
	m2, _ := providers.Merge(map[string]providers.Snapshot{"a": {Config: config.New()}})
	if m1.Version != m2.Version {
		t.Errorf("nil and empty sections merge to different versions")
	}
	c := build([]string{"a"})
	c.HTTP.Routers["a"].Priority = 5
	h3, _ := providers.Hash(c)
	if h3 == h1 {
		t.Errorf("changed configuration hashes the same")
	}
	if len(h1) != 64 {
		t.Errorf("got hash %q, want 64 hex digits", h1)
	}
}

func TestSplitRoundTrip(t *testing.T) {
	m, err := providers.Merge(case011())
	if err != nil {
		t.Fatal(err)
	}
	parts := map[string]providers.Snapshot{}
	for _, p := range []string{"file", "docker"} {
		parts[p] = providers.Split(m, p)
	}
	again, err := providers.Merge(parts)
	if err != nil {
		t.Fatal(err)
	}
	if again.Version != m.Version {
		t.Errorf("merge(split(m)) version %s, want %s", again.Version, m.Version)
	}
	if d := cmp.Diff(m.Problems, again.Problems); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
	if _, ok := parts["file"].Config.HTTP.Routers["nas"]; !ok {
		t.Errorf("split file part lacks router nas: %v", parts["file"].Config.HTTP.Routers)
	}
}

func TestQualifyAndProviderOf(t *testing.T) {
	for _, tc := range []struct{ name, provider, want, of string }{
		{"web", "docker", "web@docker", "docker"},
		{"auth@file", "docker", "auth@file", "file"},
		{"", "docker", "", ""},
	} {
		got := providers.Qualify(tc.name, tc.provider)
		if got != tc.want {
			t.Errorf("Qualify(%q, %q) = %q, want %q", tc.name, tc.provider, got, tc.want)
		}
		if of := providers.ProviderOf(got); of != tc.of {
			t.Errorf("ProviderOf(%q) = %q, want %q", got, of, tc.of)
		}
	}
}

// Dynamic entrypoints are qualified by provider like any object (two
// providers may ask for one name; dataplane/entrypoints settles it), and
// Split gives each provider its own back.
func TestMergeSplitEntryPoints(t *testing.T) {
	snap := func(addr string) providers.Snapshot {
		c := config.New()
		c.EntryPoints = map[string]*config.DynamicEntryPoint{"redis": {Address: addr}}
		return providers.Snapshot{Config: c, Origins: map[string]string{"entrypoint redis": "container r label gantry.entrypoints.redis.address"}}
	}
	m, err := providers.Merge(map[string]providers.Snapshot{"docker": snap(":8001"), "consulcatalog": snap(":8002")})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Config.EntryPoints; len(got) != 2 || got["redis@docker"].Address != ":8001" || got["redis@consulcatalog"].Address != ":8002" {
		t.Errorf("merged entrypoints: %v", got)
	}
	if m.Origins["entrypoint redis@docker"] == "" {
		t.Errorf("origin of redis@docker lost: %v", m.Origins)
	}
	if d := providers.Split(m, "docker").Config.EntryPoints; len(d) != 1 || d["redis"].Address != ":8001" {
		t.Errorf("split docker: %v", d)
	}
	plain, _ := providers.Merge(map[string]providers.Snapshot{"file": {Config: config.New()}})
	if plain.Config.EntryPoints != nil {
		t.Errorf("no entrypoint asked: %v, want nil", plain.Config.EntryPoints)
	}
}

package label

import (
	"errors"
	"maps"
	"strconv"
	"testing"

	"github.com/gantry-proxy/gantry/config"
	"github.com/google/go-cmp/cmp"
)

func TestNamesAreCaseInsensitive(t *testing.T) {
	// Case 009 test note: routers.App.rule and routers.app.service are one router.
	c, errs := Decode(map[string]string{
		"traefik.http.routers.App.rule":        "Host(`app.example.com`)",
		"traefik.http.routers.app.service":     "web",
		"TRAEFIK.HTTP.Routers.app.EntryPoints": "websecure",
	}, "traefik")
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	// The spelling of the first key in byte order names the router.
	want := map[string]*config.Router{"app": {RouterCommon: config.RouterCommon{Rule: "Host(`app.example.com`)", Service: "web", EntryPoints: []string{"websecure"}}}}
	if d := cmp.Diff(want, c.HTTP.Routers); d != "" {
		t.Errorf("routers (-want +got):\n%s", d)
	}
}

func TestPrefixes(t *testing.T) {
	labels := map[string]string{
		"gantry.http.routers.a.rule":  "Host(`a`)",
		"traefik.http.routers.b.rule": "Host(`b`)",
		"other.http.routers.c.rule":   "Host(`c`)",
	}
	tests := []struct {
		name     string
		prefixes []string
		want     []string
	}{
		{"gantry only", []string{"gantry"}, []string{"a"}},
		{"traefik only", []string{"traefik"}, []string{"b"}},
		{"both", []string{"gantry", "traefik"}, []string{"a", "b"}},
		{"none", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, errs := Decode(labels, tt.prefixes...)
			if len(errs) != 0 {
				t.Fatalf("errors: %v", errs)
			}
			var got []string
			for _, n := range []string{"a", "b", "c"} {
				if c.HTTP.Routers[n] != nil {
					got = append(got, n)
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("routers (-want +got):\n%s", d)
			}
		})
	}
}

func TestProviderKeys(t *testing.T) {
	labels := map[string]string{
		"traefik.enable":                 "false",
		"gantry.Enable":                  "true",
		"traefik.docker.Network":         "proxy",
		"traefik.docker.allownonrunning": "true",
		"traefik.consulcatalog.connect":  "true",
		"traefik.http.routers.a.rule":    "Host(`a`)",
		"com.docker.compose.project":     "stack",
		"traefik.swarm.lbswarm":          "true",
	}
	got := ProviderKeys(labels, "gantry", "traefik")
	want := map[string]string{
		"enable":                 "true", // gantry is listed first
		"docker.network":         "proxy",
		"docker.allownonrunning": "true",
		"consulcatalog.connect":  "true",
		"swarm.lbswarm":          "true",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ProviderKeys (-want +got):\n%s", d)
	}
	if _, errs := Decode(labels, "gantry", "traefik"); len(errs) != 0 {
		t.Errorf("Decode reported provider keys: %v", errs)
	}
}

func TestDecodeAllKVShapes(t *testing.T) {
	// KV paths with numeric segments (traefik/http/routers/r/entrypoints/0)
	// arrive as dotted keys; DecodeAll also reads TLS options.
	c, errs := DecodeAll(map[string]string{
		"traefik.http.routers.r.entrypoints.1":                   "websecure",
		"traefik.http.routers.r.entrypoints.0":                   "web",
		"traefik.http.routers.r.rule":                            "Host(`r`)",
		"traefik.http.services.s.loadbalancer.servers.0.url":     "http://10.0.0.1:8080",
		"traefik.http.services.s.loadbalancer.servers.10.url":    "http://10.0.0.3:8080",
		"traefik.http.services.s.loadbalancer.servers.2.url":     "http://10.0.0.2:8080",
		"traefik.tls.options.modern.minversion":                  "VersionTLS13",
		"traefik.tls.options.modern.ciphersuites.0":              "TLS_AES_128_GCM_SHA256",
		"traefik.tls.certificates.0.certfile":                    "/c.pem",
		"traefik.tls.certificates.0.keyfile":                     "/k.pem",
		"traefik.tls.certificates.0.stores.0":                    "default",
		"traefik.tls.stores.other.defaultgeneratedcert.resolver": "le",
	}, "traefik")
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	if d := cmp.Diff([]string{"web", "websecure"}, c.HTTP.Routers["r"].EntryPoints); d != "" {
		t.Errorf("entrypoints (-want +got):\n%s", d)
	}
	var urls []string
	for _, s := range c.HTTP.Services["s"].LoadBalancer.Servers {
		urls = append(urls, s.URL)
	}
	if d := cmp.Diff([]string{"http://10.0.0.1:8080", "http://10.0.0.2:8080", "http://10.0.0.3:8080"}, urls); d != "" {
		t.Errorf("servers ordered by index (-want +got):\n%s", d)
	}
	wantTLS := &config.TLSConfiguration{
		Certificates: []*config.CertAndStores{{Certificate: config.Certificate{CertFile: "/c.pem", KeyFile: "/k.pem"}, Stores: []string{"default"}}},
		Options:      map[string]*config.TLSOptions{"modern": {MinVersion: "VersionTLS13", CipherSuites: []string{"TLS_AES_128_GCM_SHA256"}}},
		Stores:       map[string]*config.TLSStore{"other": {DefaultGeneratedCert: &config.GeneratedCert{Resolver: "le"}}},
	}
	if d := cmp.Diff(wantTLS, c.TLS); d != "" {
		t.Errorf("tls (-want +got):\n%s", d)
	}
}

func TestKeyErrorWording(t *testing.T) {
	_, errs := Decode(map[string]string{"traefik.http.routers.web.priority": "x"}, "traefik")
	if len(errs) != 1 {
		t.Fatalf("got %d errors, want 1", len(errs))
	}
	e := errs[0]
	if got, want := e.Error(), `label traefik.http.routers.web.priority: invalid integer "x": invalid syntax`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if e.Object != "router web" || errors.Is(e, ErrIgnored) {
		t.Errorf("got object %q ignored %v, want router web, false", e.Object, errors.Is(e, ErrIgnored))
	}
}

// Case 010: a root that begins like http, tcp or udp (Traefik's filter is a
// string prefix match) is ErrUnknownRoot, so the provider skips the whole
// container; a v1 key such as traefik.port is only ignored.
func TestUnknownRootVsIgnored(t *testing.T) {
	_, errs := Decode(map[string]string{
		"traefik.https.routers.z.rule": "Host(`z.example.com`)",
		"traefik.UDPx.services.u.x":    "1",
		"traefik.port":                 "80",
		"traefik.http.routers.w.rule":  "Host(`w.example.com`)",
	}, "traefik")
	got := map[string]string{}
	for _, e := range errs {
		switch {
		case errors.Is(e.Err, ErrUnknownRoot):
			got[e.Key] = "root"
		case errors.Is(e.Err, ErrIgnored):
			got[e.Key] = "ignored"
		default:
			got[e.Key] = e.Err.Error()
		}
	}
	want := map[string]string{"traefik.https.routers.z.rule": "root", "traefik.UDPx.services.u.x": "root", "traefik.port": "ignored"}
	if !maps.Equal(got, want) {
		t.Errorf("errors %v, want %v", got, want)
	}
}

// Case 036: booleans are strconv.ParseBool's spellings, without trimming.
func TestBooleansAreParseBool(t *testing.T) {
	for v, want := range map[string]string{"1": "false", "t": "false", "T": "false", "TRUE": "false", "0": "true", "f": "true", "F": "true", "False": "true", "yes": "error", " true": "error", "true\"": "error", "on": "error"} {
		c, errs := Decode(map[string]string{"traefik.http.services.s.loadbalancer.passhostheader": v, "traefik.http.services.s.loadbalancer.server.port": "80"}, "traefik")
		got := "error"
		if len(errs) == 0 {
			// passHostHeader inverted so the zero value is distinguishable.
			got = strconv.FormatBool(!*c.HTTP.Services["s"].LoadBalancer.PassHostHeader)
		}
		if got != want {
			t.Errorf("passhostheader=%q: got %s (%v), want %s", v, got, errs, want)
		}
	}
}

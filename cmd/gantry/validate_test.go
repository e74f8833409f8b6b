package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config/static"
)

func TestValidate(t *testing.T) {
	bad, _ := filepath.Abs("testdata/dyn-bad")
	tests := []struct {
		name  string
		args  []string
		code  int
		want  []string
		lacks []string
	}{
		{"good", []string{"--providers.file.directory=testdata/dyn-good", "--entrypoints.web.address=:80", "--api.insecure"}, 0,
			[]string{"routers: 2, disabled: 0", "valid: 0 warnings"}, []string{"error:"}},
		{"bad files", []string{"--providers.file.directory=testdata/dyn-bad", "--entrypoints.web.address=:80"}, 1, []string{
			"error: file: " + filepath.Join(bad, "broken.yml") + `:6:7: unknown field "priorty"`,
			"error: " + filepath.Join(bad, "app.yml") + ":7: router badrule@file: rule: offset 0: Host: expected 1 argument, got 2",
			"error: " + filepath.Join(bad, "app.yml") + `:9: router nosvc@file: service "missing@file" does not exist`,
			"invalid: 3 errors, 0 warnings",
		}, []string{"router good@file"}},
		{"missing directory", []string{"--providers.file.directory=testdata/nope", "--entrypoints.web.address=:80"}, 1,
			[]string{"error: providers.file.directory:", "testdata/nope"}, nil},
		{"bad static", []string{"--entrypoints.web.address=:80", "--log.level=LOUD"}, 1,
			[]string{"error: static configuration: log.level", "invalid: 1 error"}, nil},
		{"bad resolver", []string{"--entrypoints.web.address=:80", "--certificatesresolvers.le.acme.keytype=DSA", "--certificatesresolvers.le.acme.httpchallenge.entrypoint=web"}, 1,
			[]string{`error: certificatesResolvers.le.acme.keyType "DSA"`, "invalid: 1 error"}, nil},
		{"resolver and routers", []string{"--providers.file.directory=testdata/dyn-good", "--entrypoints.web.address=:80", "--api.insecure",
			"--certificatesresolvers.le.acme.tlschallenge", "--entrypoints.web.http.tls.certresolver=nope"}, 1,
			[]string{"certificate resolvers: 1 checked", `certificate resolver "nope" is not defined in certificatesResolvers (defined: le)`}, nil},
		// Issue 23: with no resolvers at all, a certResolver is still
		// reported, as run reports it.
		{"certResolver without resolvers", []string{"--providers.file.directory=testdata/dyn-good", "--entrypoints.web.address=:80", "--api.insecure",
			"--entrypoints.web.http.tls.certresolver=nope"}, 1,
			[]string{`certificate resolver "nope" is not defined: the static configuration has no certificatesResolvers`, "invalid: "}, nil},
		{"dynamic entrypoints", []string{"--providers.file.directory=testdata/dyn-entrypoints", "--entrypoints.web.address=:80", "--dynamicEntryPoints.allowed=8000-8009"}, 1,
			[]string{"routers: 1, disabled: 0", `entrypoint evil: address ":9001" is outside dynamicEntryPoints.allowed (8000-8009); not opened`, "invalid: 1 error"},
			[]string{"shop"}},
		// The OpenTelemetry sections are checked as at start (they failed
		// only there), each error naming its option.
		{"otlp and tracing", []string{"--entrypoints.web.address=:80", "--tracing.samplerate=2", "--log.otlp.http.endpoint=ftp://x",
			"--accesslog.otlp.grpc.endpoint=bad", "--metrics.otlp.http.endpoint=ftp://y"}, 1, []string{
			`error: metrics.otlp.http.endpoint: "ftp://y" is not an http(s) URL`,
			`error: accessLog.otlp.grpc.endpoint: "bad" is not host:port`,
			`error: log.otlp.http.endpoint: "ftp://x" is not an http(s) URL`,
			"error: tracing.sampleRate: 2 is not between 0 and 1",
			"invalid: 4 errors"}, nil},
		{"tracing tls", []string{"--entrypoints.web.address=:80", "--tracing.otlp.grpc.tls.ca=testdata/nope/ca.pem"}, 1,
			[]string{"error: tracing.otlp.grpc.tls: ca: open testdata/nope/ca.pem: no such file or directory", "invalid: 1 error"}, nil},
		// Valid sections pass, and nothing is sent (an unroutable collector
		// would make validate wait).
		{"otlp valid", []string{"--entrypoints.web.address=:80", "--metrics.otlp.grpc.endpoint=10.255.255.1:4317", "--metrics.otlp.grpc.insecure",
			"--tracing.otlp.http.endpoint=http://10.255.255.1:4318/v1/traces", "--log.otlp.grpc.endpoint=10.255.255.1:4317",
			"--accesslog.otlp.http.endpoint=http://10.255.255.1:4318"}, 0, []string{"valid: 0 warnings"}, nil},
		// An invalid header label is reported once, not followed by
		// prometheus@internal "not enabled".
		{"prometheus header label", []string{"--entrypoints.web.address=:80", "--metrics.prometheus.headerlabels.bad-name=X-Foo"}, 1,
			[]string{"error: metrics.prometheus.headerLabels.bad-name: not a usable label name", "invalid: 1 error"},
			[]string{"not enabled"}},
		// Issue 23: unknown options are refused, as by Traefik, naming the
		// key as written and where; a Traefik option Gantry does not
		// support stays a warning, also beside errors.
		{"unknown flag", []string{"--api.insecur=true"}, 1,
			[]string{"error: static configuration: flags: unknown option --api.insecur (did you mean --api.insecure?)", "invalid: 1 error, 0 warnings"}, []string{"\nvalid:"}},
		{"unknown file keys", []string{"--configFile=testdata/strict/typo.yml"}, 1, []string{
			"warning: testdata/strict/typo.yml:7: option metrics.datadog is a Traefik option Gantry does not support: ignored",
			"error: static configuration: testdata/strict/typo.yml:3: unknown option entryPoints.web.adress (did you mean entryPoints.web.address?)",
			`error: static configuration: log.level: unknown level "LOUD"`,
			"invalid: 2 errors, 1 warning"}, []string{"missing port"}},
		{"unknown toml key", []string{"--configFile=testdata/strict/typo.toml"}, 1, []string{
			"error: static configuration: testdata/strict/typo.toml:6: unknown option api.dashbord (did you mean api.dashboard?)"}, nil},
		// Issue 23: messages name the router (not "field
		// http.routers.priority") and a bad server URL is said once.
		{"dynamic messages", []string{"--providers.file.directory=testdata/dyn-leaks", "--entrypoints.web.address=:80"}, 1, []string{
			"field http.routers.myrouter.priority: cannot use string as int; router myrouter left out",
			`service s: loadBalancer.servers[0].url: "http://[::1" does not parse`,
			"invalid: 2 errors"}, []string{"config.", "field http.routers.priority", "service s@file"}},
		{"warnings do not fail", []string{"--providers.file.directory=testdata/dyn-good", "--entrypoints.web.address=:80", "--experimental.plugins.x.modulename=y"}, 0,
			[]string{"warning: flags: option --experimental.plugins is a Traefik option Gantry does not support: ignored", "valid: 1 warning"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			code := realMain(context.Background(), append([]string{"validate"}, tt.args...), nil, &out, io.Discard)
			if code != tt.code {
				t.Errorf("exit code %d, want %d", code, tt.code)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			for _, l := range tt.lacks {
				if strings.Contains(out.String(), l) {
					t.Errorf("output has %q:\n%s", l, out.String())
				}
			}
		})
	}
}

// Issue 23: an environment variable naming an unknown option is refused
// (naming it), one naming no top-level option is not read (Traefik's
// loader reads TRAEFIK_<OPTION>… only).
func TestValidateEnvironment(t *testing.T) {
	var out strings.Builder
	env := []string{"GANTRY_API_INSECUR=true", "GANTRY_IMAGE=gantry:local", "TRAEFIK_ENTRYPOINTS_WEB_ADDRESS=:80"}
	if code := realMain(context.Background(), []string{"validate"}, env, &out, io.Discard); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	want := "error: static configuration: environment: unknown option GANTRY_API_INSECUR (did you mean GANTRY_API_INSECURE?)\ninvalid: 1 error, 0 warnings\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}

// Issue 23: run refuses an unknown option before it listens or opens the
// store (it started a proxy on :80 and wrote gantry.db).
func TestRunRefusesUnknownOption(t *testing.T) {
	t.Chdir(t.TempDir())
	var stderr strings.Builder
	code := realMain(context.Background(), []string{"--api.insecur=true", "--entrypoints.web.address=127.0.0.1:0"}, nil, io.Discard, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "unknown option --api.insecur") {
		t.Errorf("exit code %d, stderr %q; want 1 naming --api.insecur", code, stderr.String())
	}
	if _, err := os.Stat("gantry.db"); err == nil {
		t.Error("gantry.db written")
	}
}

// Issue 23: --help (and validate --help) list the options, built from the
// static configuration's types with their doc comments, and every option
// listed is one the loader takes.
func TestHelpListsOptions(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"validate", "--help"}} {
		var out strings.Builder
		if code := realMain(context.Background(), args, nil, &out, io.Discard); code != 0 {
			t.Errorf("%v: exit code %d", args, code)
		}
		for _, w := range []string{
			"  --entryPoints.<name>.address <string>\n        Address is \"[host]:port\"",
			"  --entryPoints.<name>.transport.maxConnections <int>\n        MaxConnections (Gantry's own) caps",
			"  --certificatesResolvers.<name>.acme.email <string>",
			"  --entryPoints.<name>.http.tls.domains[n].main <string>",
		} {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%v: output lacks %q", args, w)
			}
		}
	}
	for _, o := range static.Options() {
		key := strings.ReplaceAll(strings.ReplaceAll(o.Path, "<name>", "x"), "[n]", "[0]")
		_, err := loadStatic(cliArgs{command: "validate", flags: []flagPair{{key, "1"}}}, nil)
		if err != nil && strings.Contains(err.Error(), "unknown option") {
			t.Errorf("--help lists %s, which the loader refuses: %v", o.Path, err)
		}
	}
}

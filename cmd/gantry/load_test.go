package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
)

func mustParse(t *testing.T, args ...string) cliArgs {
	t.Helper()
	c, err := parseArgs(args)
	if err != nil {
		t.Fatalf("parseArgs(%q): %v", args, err)
	}
	return c
}

// TestMain turns the default file search off (a traefik.yml in
// /etc/traefik on the test machine must not change the results);
// TestDefaultFileSearch sets its own list.
func TestMain(m *testing.M) {
	defaultConfigFiles = nil
	os.Exit(m.Run())
}

// load runs loadStatic.
func load(t *testing.T, args []string, env ...string) *loaded {
	t.Helper()
	l, err := loadStatic(mustParse(t, args...), env)
	if err != nil {
		t.Fatalf("loadStatic: %v", err)
	}
	return l
}

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		command string
		file    string
		flags   []flagPair
		wantErr bool
	}{
		{"default run", nil, "run", "", nil, false},
		{"validate with file", []string{"validate", "--configFile=/x.yml"}, "validate", "/x.yml", nil, false},
		{"configfile separate value any case", []string{"--configfile", "/y.toml"}, "run", "/y.toml", nil, false},
		{"version", []string{"version"}, "version", "", nil, false},
		{"bool section and value flags", []string{"--api.insecure", "--entryPoints.web.address", ":80", "--providers.docker"}, "run", "",
			[]flagPair{{"api.insecure", "true"}, {"entryPoints.web.address", ":80"}, {"providers.docker", "true"}}, false},
		{"single dash", []string{"-log.level=DEBUG"}, "run", "", []flagPair{{"log.level", "DEBUG"}}, false},
		{"unknown subcommand", []string{"serve"}, "", "", nil, true},
		{"two subcommands", []string{"run", "validate"}, "", "", nil, true},
		{"configFile without value", []string{"--configFile"}, "", "", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseArgs(tt.args)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if c.command != tt.command || c.configFile != tt.file || !slices.Equal(c.flags, tt.flags) {
				t.Errorf("got %+v, want command %q file %q flags %v", c, tt.command, tt.file, tt.flags)
			}
		})
	}
}

// The flags seen in real compose files (Traefik's quick start and docs).
func TestComposeFlags(t *testing.T) {
	l := load(t, []string{
		"--api.insecure=true",
		"--providers.docker=true",
		"--providers.docker.exposedbydefault=false",
		"--entrypoints.web.address=:80",
		"--entryPoints.websecure.address=:443",
		"--entrypoints.web.http.redirections.entrypoint.to=websecure",
		"--entrypoints.web.http.redirections.entrypoint.scheme=https",
		"--entrypoints.websecure.forwardedheaders.trustedips=127.0.0.1/32,10.0.0.0/8",
		"--entrypoints.websecure.transport.lifecycle.gracetimeout=42s",
		"--providers.file.directory=/etc/gantry",
		"--log.level=DEBUG",
		"--accesslog=true",
		"--metrics.prometheus=true",
	})
	c := l.Config
	if len(l.Warnings) != 0 {
		t.Errorf("warnings: %v", l.Warnings)
	}
	if c.API == nil || !c.API.Insecure {
		t.Error("api.insecure not set")
	}
	if c.Providers.Docker == nil || c.Providers.Docker.ExposedByDefault == nil || *c.Providers.Docker.ExposedByDefault {
		t.Errorf("providers.docker: %+v", c.Providers.Docker)
	}
	if c.Providers.File == nil || c.Providers.File.Directory != "/etc/gantry" {
		t.Errorf("providers.file: %+v", c.Providers.File)
	}
	web, ws := c.EntryPoints["web"], c.EntryPoints["websecure"]
	if web == nil || web.Address != ":80" || ws == nil || ws.Address != ":443" {
		t.Fatalf("entrypoints: %v", c.EntryPoints)
	}
	if r := web.HTTP.Redirections.EntryPoint; r.To != "websecure" || r.Scheme != "https" {
		t.Errorf("redirection: %+v", r)
	}
	if got := ws.ForwardedHeaders.TrustedIPs; !slices.Equal(got, []string{"127.0.0.1/32", "10.0.0.0/8"}) {
		t.Errorf("trustedIPs: %v", got)
	}
	if got := ws.Transport.LifeCycle.GraceTimeOut.D(); got != 42*time.Second {
		t.Errorf("graceTimeOut: %v", got)
	}
	if c.Log.Level != "DEBUG" || c.AccessLog == nil || c.Metrics == nil || c.Metrics.Prometheus == nil {
		t.Errorf("log %+v accessLog %+v metrics %+v", c.Log, c.AccessLog, c.Metrics)
	}
	if ep := c.EntryPoints["traefik"]; ep == nil || ep.Address != ":8080" {
		t.Errorf("api.insecure and metrics need the traefik entrypoint on :8080, got %+v", ep)
	}
}

// dynamicEntryPoints loads from flags and GANTRY_* like any section.
func TestDynamicEntryPointsOptions(t *testing.T) {
	l := load(t, []string{"--dynamicEntryPoints.allowed=8000-8099,udp:5300-5310", "--dynamicentrypoints.template.transport.lifecycle.gracetimeout=3s"})
	d := l.Config.DynamicEntryPoints
	if d == nil || !slices.Equal(d.Allowed, []string{"8000-8099", "udp:5300-5310"}) || d.Template.Transport.LifeCycle.GraceTimeOut.D() != 3*time.Second {
		t.Fatalf("dynamicEntryPoints: %+v", d)
	}
	if len(l.Warnings) != 0 {
		t.Errorf("warnings: %v", l.Warnings)
	}
	e, err := loadStatic(mustParse(t), []string{"GANTRY_DYNAMICENTRYPOINTS_ALLOWED=127.0.0.1:9000"})
	if err != nil || e.Config.DynamicEntryPoints == nil || !slices.Equal(e.Config.DynamicEntryPoints.Allowed, []string{"127.0.0.1:9000"}) {
		t.Fatalf("from the environment: %+v %v", e, err)
	}
}

func TestTraefikYAML(t *testing.T) {
	l := load(t, []string{"--configFile=testdata/traefik/traefik.yml"})
	c := l.Config
	if c.Log.Format != "json" || c.Log.Level != "DEBUG" {
		t.Errorf("log: %+v", c.Log)
	}
	rt := c.EntryPoints["websecure"].Transport.RespondingTimeouts
	if rt.ReadTimeout.D() != 30*time.Second || rt.IdleTimeout.D() != 90*time.Second {
		t.Errorf("respondingTimeouts: read %v idle %v", rt.ReadTimeout, rt.IdleTimeout)
	}
	if c.Providers.File.Directory != "/etc/traefik/dynamic" || *c.Providers.File.Watch != true {
		t.Errorf("file provider: %+v", c.Providers.File)
	}
	if len(l.Warnings) != 0 {
		t.Errorf("warnings: %q, want none", l.Warnings)
	}
	if a := c.CertificatesResolvers["le"]; a == nil || a.ACME == nil || a.ACME.Email != "ops@example.com" || a.ACME.Storage != "/letsencrypt/acme.json" {
		t.Errorf("certificatesResolvers.le: %+v", c.CertificatesResolvers["le"])
	}
}

func TestTraefikTOML(t *testing.T) {
	l := load(t, []string{"--configFile=testdata/traefik/traefik.toml"})
	c := l.Config
	if c.EntryPoints["web"].Address != ":8000" || !c.EntryPoints["web"].ForwardedHeaders.Insecure {
		t.Errorf("web: %+v", c.EntryPoints["web"])
	}
	if c.Providers.File.Filename != "/etc/traefik/dynamic.toml" {
		t.Errorf("file: %+v", c.Providers.File)
	}
	if p := c.Metrics.Prometheus; !slices.Equal(p.Buckets, []float64{0.1, 0.3, 1.2}) || p.EntryPoint != "web" {
		t.Errorf("prometheus: %+v", p)
	}
	if _, ok := c.EntryPoints["traefik"]; ok {
		t.Error("metrics on entrypoint web must not add the traefik entrypoint")
	}
	if len(l.Warnings) != 0 {
		t.Errorf("warnings: %v", l.Warnings)
	}
}

func TestEnvironment(t *testing.T) {
	l := load(t, nil,
		"GANTRY_ENTRYPOINTS_WEB_ADDRESS=:81",
		"TRAEFIK_ENTRYPOINTS_WEB_ADDRESS=:82", // GANTRY_* wins
		"TRAEFIK_ENTRYPOINTS_METRICS_ADDRESS=:9100",
		"TRAEFIK_PROVIDERS_DOCKER=true",
		"TRAEFIK_PROVIDERS_DOCKER_EXPOSEDBYDEFAULT=false",
		"GANTRY_LOG_LEVEL=warn",
		"GANTRY_NOSUCH_THING=1",    // not a top-level option: not read, as by Traefik
		"GANTRY_UPGRADE_FDS=web:3", // the binary upgrade's handoff, not configuration
		"GANTRY_UPGRADE_READY_FD=4",
		"HOME=/root",
	)
	c := l.Config
	if c.EntryPoints["web"].Address != ":81" || c.EntryPoints["metrics"].Address != ":9100" {
		t.Errorf("entrypoints: web %+v metrics %+v", c.EntryPoints["web"], c.EntryPoints["metrics"])
	}
	if c.Providers.Docker == nil || *c.Providers.Docker.ExposedByDefault {
		t.Errorf("docker: %+v", c.Providers.Docker)
	}
	if c.Log.Level != "warn" {
		t.Errorf("log level %q", c.Log.Level)
	}
	if len(l.Warnings) != 0 {
		t.Errorf("warnings: got %q, want none", l.Warnings)
	}
}

func TestPrecedence(t *testing.T) {
	l := load(t, []string{"--configFile=testdata/traefik/traefik.toml", "--entrypoints.web.address=:83"},
		"GANTRY_ENTRYPOINTS_WEB_ADDRESS=:84", "GANTRY_LOG_LEVEL=ERROR")
	if got := l.Config.EntryPoints["web"].Address; got != ":83" {
		t.Errorf("flags must win: address %q", got)
	}
	if got := l.Config.Log.Level; got != "ERROR" {
		t.Errorf("environment must win over the file: level %q", got)
	}
	if !l.Config.EntryPoints["web"].ForwardedHeaders.Insecure {
		t.Error("file options not overridden must stay")
	}
	if want := []string{"file testdata/traefik/traefik.toml", "environment GANTRY_*", "flags"}; !slices.Equal(l.Sources, want) {
		t.Errorf("sources %q, want %q", l.Sources, want)
	}
}

func TestDefaultFileSearch(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	saved := defaultConfigFiles
	defaultConfigFiles = []string{"gantry.yml", "traefik.yml"}
	t.Cleanup(func() { defaultConfigFiles = saved })
	writeFile(t, "traefik.yml", "entryPoints:\n  web:\n    address: :85\n")
	l, err := loadStatic(cliArgs{command: "run"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.File != "traefik.yml" || l.Config.EntryPoints["web"].Address != ":85" {
		t.Errorf("file %q entrypoints %v", l.File, l.Config.EntryPoints)
	}
}

func TestDefaultEntryPoint(t *testing.T) {
	l := load(t, nil)
	if ep := l.Config.EntryPoints["http"]; ep == nil || ep.Address != ":80" || len(l.Config.EntryPoints) != 1 {
		t.Errorf("with no entrypoints Traefik listens on http :80; got %v", l.Config.EntryPoints)
	}
}

func TestStaticErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  []string
		want []string // substrings of the error
	}{
		{"bad bool", []string{"--api.insecure=maybe"}, nil, []string{"flags: option --api.insecure: invalid boolean", `"maybe"`}},
		{"bad duration", []string{"--entrypoints.web.address=:80", "--entrypoints.web.transport.lifecycle.gracetimeout=soon"}, nil,
			[]string{"flags: option --entrypoints.web.transport.lifecycle.gracetimeout", `invalid duration "soon"`}},
		{"bad int from env", nil, []string{"GANTRY_ENTRYPOINTS_WEB_MAXHEADERBYTES=lots", "GANTRY_ENTRYPOINTS_WEB_ADDRESS=:80"},
			[]string{`environment: option GANTRY_ENTRYPOINTS_WEB_MAXHEADERBYTES: invalid integer "lots"`}},
		{"bad address", []string{"--entrypoints.web.address=80"}, nil, []string{"entryPoints.web.address \"80\""}},
		{"sctp", []string{"--entrypoints.dns.address=:53/sctp"}, nil, []string{"want tcp or udp, not sctp"}},
		{"bad trusted ip", []string{"--entrypoints.web.address=:80", "--entrypoints.web.forwardedheaders.trustedips=10.0.0.0/33"}, nil,
			[]string{"entryPoints.web.forwardedHeaders.trustedIPs[0]"}},
		{"file provider both", []string{"--providers.file.directory=/a", "--providers.file.filename=/b.yml"}, nil, []string{"providers.file: set directory or filename, not both"}},
		{"log level", []string{"--log.level=LOUD"}, nil, []string{"log.level", `"LOUD"`}},
		{"redirect to nowhere", []string{"--entrypoints.web.address=:80", "--entrypoints.web.http.redirections.entrypoint.to=websecure"}, nil,
			[]string{`no entrypoint "websecure"`}},
		{"missing file", []string{"--configFile=/nonexistent/gantry.yml"}, nil, []string{"/nonexistent/gantry.yml"}},
		{"dynamic entrypoints", []string{"--dynamicEntryPoints.allowed=8000-8099,9000-8000", "--dynamicentrypoints.template.asdefault=true"}, nil,
			[]string{`dynamicEntryPoints.allowed[1] "9000-8000": port range 9000-8000 is empty`, "dynamicEntryPoints.template: asDefault"}},
		{"several errors at once", []string{"--api.insecure=maybe", "--log.level=LOUD", "--ping=perhaps"}, nil,
			[]string{"api.insecure", "ping"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadStatic(mustParse(t, tt.args...), tt.env)
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestBadFileSyntaxNamesFileAndLine(t *testing.T) {
	dir := t.TempDir()
	p := dir + "/gantry.yml"
	writeFile(t, p, "entryPoints:\n  web:\n    address: \":80\"\n   bad: [\n")
	_, err := loadStatic(cliArgs{command: "run", configFile: p}, nil)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "line") {
		t.Errorf("got %v, want an error naming %s and the line", err, p)
	}
}

func TestTakesValue(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"entryPoints.web.address", true},
		{"api.insecure", false},
		{"providers.docker", false},
		{"log.level", true},
		{"entrypoints.web.forwardedheaders.trustedips", true},
		{"no.such", false},
	}
	for _, tt := range tests {
		if got := takesValue(strings.Split(tt.path, ".")); got != tt.want {
			t.Errorf("takesValue(%s) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestParseLevel(t *testing.T) {
	for in, want := range map[string]string{"": "INFO", "debug": "DEBUG", "TRACE": "DEBUG", "Warning": "WARN", "PANIC": "ERROR", "fatal": "ERROR"} {
		got, err := parseLevel(in)
		if err != nil || got.String() != want {
			t.Errorf("parseLevel(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// api.debug and entryPoints.<ep>.http.tls are supported, so they must not
// warn.
func TestUnsupportedKnownOptionsWarn(t *testing.T) {
	l := load(t, []string{"--entrypoints.websecure.address=:443", "--entrypoints.websecure.http.tls=true", "--api.debug", "--global.checknewversion=true"})
	want := []string{
		"static configuration: options global.checkNewVersion and global.sendAnonymousUsage have no effect: Gantry never contacts the network on its own",
	}
	if !slices.Equal(l.Warnings, want) {
		t.Errorf("warnings:\n got %q\nwant %q", l.Warnings, want)
	}
}

func TestNewLoggerFormats(t *testing.T) {
	tests := []struct {
		format, level string
		want, lacks   string
	}{
		{"json", "DEBUG", `{"time":`, ""},
		{"", "INFO", "level=INFO msg=shown", "hidden"},
		{"common", "ERROR", "", "shown"},
	}
	for _, tt := range tests {
		var b strings.Builder
		log, closer, err := newLogger(&static.Log{Format: tt.format, Level: tt.level}, &b)
		if err != nil {
			t.Fatal(err)
		}
		log.Debug("hidden")
		log.Info("shown")
		closer.Close()
		if tt.level == "INFO" && strings.Contains(b.String(), "hidden") {
			t.Errorf("%s/%s: debug line shown at INFO: %s", tt.format, tt.level, b.String())
		}
		if !strings.Contains(b.String(), tt.want) || (tt.lacks != "" && strings.Contains(b.String(), tt.lacks)) {
			t.Errorf("%s/%s: got %q, want %q and not %q", tt.format, tt.level, b.String(), tt.want, tt.lacks)
		}
	}
	if _, _, err := newLogger(&static.Log{Level: "chatty"}, io.Discard); err == nil {
		t.Error("unknown level: want an error")
	}
}

func TestIndexedOptions(t *testing.T) {
	l := load(t, []string{
		"--entrypoints.web.address=:80",
		"--entrypoints.web.forwardedheaders.trustedips[1]=10.0.0.0/8",
		"--entrypoints.web.forwardedheaders.trustedips[0]=127.0.0.1/32",
		"--entrypoints.web.http.tls.domains[0].main=example.com",
		"--entrypoints.web.http.tls.domains[0].sans=a.example.com,b.example.com",
	}, "GANTRY_PROVIDERS_CONSUL_ENDPOINTS_0=10.0.0.5:8500")
	ep := l.Config.EntryPoints["web"]
	if got := ep.ForwardedHeaders.TrustedIPs; !slices.Equal(got, []string{"127.0.0.1/32", "10.0.0.0/8"}) {
		t.Errorf("trustedIPs: %v", got)
	}
	if d := ep.HTTP.TLS.Domains; len(d) != 1 || d[0].Main != "example.com" || !slices.Equal(d[0].SANs, []string{"a.example.com", "b.example.com"}) {
		t.Errorf("domains: %+v", d)
	}
	if got := l.Config.Providers.Consul.Endpoints; !slices.Equal(got, []string{"10.0.0.5:8500"}) {
		t.Errorf("consul endpoints: %v", got)
	}
	if _, err := loadStatic(mustParse(t, "--entrypoints.web.forwardedheaders.trustedips.x=1"), nil); err == nil {
		t.Error("a non-index key under a list: want an error")
	}
}

func TestSplitKey(t *testing.T) {
	for in, want := range map[string][]string{
		"a.b.c":           {"a", "b", "c"},
		"a.list[2].main":  {"a", "list", "2", "main"},
		"m[0][1]":         {"m", "0", "1"},
		"entryPoints.web": {"entryPoints", "web"},
	} {
		if got := splitKey(in); !slices.Equal(got, want) {
			t.Errorf("splitKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// A compose file for Traefik with Let's Encrypt: every option Gantry
// supports is taken, the resolver included (tlschallenge=true is an empty
// section).
func TestComposeFlagsWithACME(t *testing.T) {
	l := load(t, []string{
		"--providers.docker.endpoint=tcp://socket-proxy:2375",
		"--providers.docker.network=proxy",
		"--serverstransport.insecureskipverify=true",
		"--entrypoints.websecure.address=:443",
		"--entrypoints.websecure.http.tls.certresolver=le",
		"--certificatesresolvers.le.acme.tlschallenge=true",
		"--certificatesresolvers.le.acme.email=ops@example.com",
		"--log.filepath=/var/log/traefik.log",
		"--accesslog.filepath=/var/log/access.log",
		"--global.sendAnonymousUsage=false",
	})
	c := l.Config
	if c.Providers.Docker.Endpoint != "tcp://socket-proxy:2375" || c.Providers.Docker.Network != "proxy" {
		t.Errorf("docker: %+v", c.Providers.Docker)
	}
	if !c.ServersTransport.InsecureSkipVerify || c.Log.FilePath != "/var/log/traefik.log" || c.AccessLog.FilePath != "/var/log/access.log" {
		t.Errorf("serversTransport %+v log %+v accessLog %+v", c.ServersTransport, c.Log, c.AccessLog)
	}
	if a := c.CertificatesResolvers["le"]; a == nil || a.ACME == nil || a.ACME.Email != "ops@example.com" || a.ACME.TLSChallenge == nil {
		t.Errorf("certificatesResolvers.le: %+v", c.CertificatesResolvers["le"])
	}
	if len(l.Warnings) != 0 {
		t.Errorf("warnings: %q, want none", l.Warnings)
	}
	if tls := c.EntryPoints["websecure"].HTTP.TLS; tls == nil || tls.CertResolver != "le" {
		t.Errorf("entryPoints.websecure.http.tls: %+v", tls)
	}
}

// TestEntryPointsSharingAnAddress: two entrypoints of one protocol on one
// port whose hosts overlap (equal, or a wildcard) cannot both be bound;
// the load says so by name (validate and a reload refuse the file) instead
// of "valid" followed by "address already in use" at run.
func TestEntryPointsSharingAnAddress(t *testing.T) {
	refused := []struct{ a, b string }{
		{"127.0.0.1:8000", "127.0.0.1:8000"},
		{":8000", "127.0.0.1:8000"},
		{"0.0.0.0:8000", ":8000"},
		{"0.0.0.0:8000", "127.0.0.1:8000/tcp"},
		{"[::]:8000", "127.0.0.1:8000"},
		{"[::1]:8000", "[0:0::1]:8000"},
		{":5300/udp", "127.0.0.1:5300/UDP"},
	}
	for _, tt := range refused {
		_, err := loadStatic(mustParse(t, "--entryPoints.one.address="+tt.a, "--entryPoints.two.address="+tt.b), nil)
		if err == nil || !strings.Contains(err.Error(), "entryPoints.two.address") || !strings.Contains(err.Error(), "entryPoints.one") {
			t.Errorf("%s and %s: err %v, want one naming both entrypoints", tt.a, tt.b, err)
		}
	}
	accepted := []struct{ a, b string }{
		{"127.0.0.1:8000", "127.0.0.2:8000"},
		{":8000", ":8001"},
		{":8000", ":8000/udp"},
		{"0.0.0.0:8000", "[::1]:8000"},
	}
	for _, tt := range accepted {
		if _, err := loadStatic(mustParse(t, "--entryPoints.one.address="+tt.a, "--entryPoints.two.address="+tt.b), nil); err != nil {
			t.Errorf("%s and %s: %v", tt.a, tt.b, err)
		}
	}
}

// A static file over the size limit is refused by name before it is
// parsed (a mistaken 22 MB file took seconds and hundreds of MB).
func TestStaticFileTooLarge(t *testing.T) {
	p := filepath.Join(t.TempDir(), "gantry.yml")
	big := "entryPoints:\n  web:\n    address: \":80\"\n# " + strings.Repeat("x", maxStaticFileSize) + "\n"
	if err := os.WriteFile(p, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := readConfigFile(p)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "larger than 4 MiB") {
		t.Fatalf("got %v, want the file refused by name for its size", err)
	}
	small := filepath.Join(t.TempDir(), "ok.yml")
	if err := os.WriteFile(small, []byte("entryPoints:\n  web:\n    address: \":80\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readConfigFile(small); err != nil {
		t.Fatal(err)
	}
}

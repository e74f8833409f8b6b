package file

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-proxy/gantry/providers"
)

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// read returns testdata/name as an input named name.
func read(t *testing.T, name string) input {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return input{path: name, data: b}
}

// as renames an input (the same content under another file name).
func as(in input, path string) input { in.path = path; return in }

func routerNames(s providers.Snapshot) []string {
	var n []string
	for k := range s.Config.HTTP.Routers {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

func problems(s providers.Snapshot) []string {
	var out []string
	for _, p := range s.Problems {
		out = append(out, string(p.Severity)+" "+p.Source+": "+p.Message)
	}
	return out
}

// Case 022: a broken b.yml keeps b's last good content and names file, line
// and column; fixing it applies the fix; a cold start with b broken loads a.
func TestCase022BrokenFileKeepsLastGood(t *testing.T) {
	b := newBuilder(discard, false)
	a, good := read(t, "case022/a.yml"), as(read(t, "case022/b.yml"), "b.yml")
	a.path = "a.yml"

	s := b.build(context.Background(), []input{a, good})
	if got := routerNames(s); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("routers %v, want [a b]", got)
	}
	if len(s.Problems) != 0 {
		t.Fatalf("unexpected problems %v", problems(s))
	}

	for _, tc := range []struct {
		file, wantSource, wantMsg string
	}{
		{"case022/b-indent.yml", "b.yml:5", "yaml: line 5: mapping values are not allowed in this context"},
		{"case022/b-truncated.yml", "b.yml:", "yaml: line"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			s := b.build(context.Background(), []input{a, as(read(t, tc.file), "b.yml")})
			if got := routerNames(s); !slices.Equal(got, []string{"a", "b"}) {
				t.Errorf("routers %v, want [a b] (b kept from its last good content)", got)
			}
			if url := s.Config.HTTP.Services["b"].LoadBalancer.Servers[0].URL; url != "http://192.0.2.71" {
				t.Errorf("service b url %s, want the last good http://192.0.2.71", url)
			}
			if len(s.Problems) != 1 {
				t.Fatalf("problems %v, want 1", problems(s))
			}
			p := s.Problems[0]
			if !strings.HasPrefix(p.Source, tc.wantSource) || !strings.Contains(p.Message, tc.wantMsg) ||
				!strings.HasSuffix(p.Message, "keeping the last good content of this file") || p.Severity != providers.SeverityError {
				t.Errorf("problem %s %q: want source %s…, message containing %q", p.Source, p.Message, tc.wantSource, tc.wantMsg)
			}
		})
	}

	// Fixed: the new content applies.
	fixed := as(read(t, "case022/b.yml"), "b.yml")
	fixed.data = []byte(strings.Replace(string(fixed.data), "192.0.2.71", "192.0.2.72", 1))
	s = b.build(context.Background(), []input{a, fixed})
	if url := s.Config.HTTP.Services["b"].LoadBalancer.Servers[0].URL; url != "http://192.0.2.72" || len(s.Problems) != 0 {
		t.Errorf("after fix: url %s, problems %v; want 192.0.2.72 and none", url, problems(s))
	}

	// Cold start with b broken: a loads, b contributes nothing (issue 6020:
	// the later fix must still apply, covered by the watch tests).
	cold := newBuilder(discard, false)
	s = cold.build(context.Background(), []input{a, as(read(t, "case022/b-indent.yml"), "b.yml")})
	if got := routerNames(s); !slices.Equal(got, []string{"a"}) {
		t.Errorf("cold start routers %v, want [a]", got)
	}
	if len(s.Problems) != 1 || !strings.HasSuffix(s.Problems[0].Message, "nothing from this file is used") {
		t.Errorf("cold start problems %v", problems(s))
	}
}

func TestDuplicatesFirstFileWins(t *testing.T) {
	b := newBuilder(discard, false)
	s := b.build(context.Background(), []input{read(t, "dup1.yml"), read(t, "dup2.toml")})
	if got := s.Config.HTTP.Routers["shared"].Rule; got != "Path(`/first`)" {
		t.Errorf("shared rule %s, want the first file's", got)
	}
	if _, ok := s.Config.HTTP.Routers["other"]; !ok {
		t.Errorf("router other from the second file missing")
	}
	want := []string{`warning dup2.toml:5:15: router "shared" is already defined in dup1.yml; this definition is skipped`}
	if d := cmp.Diff(want, problems(s)); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
}

// Invalid objects stay in the snapshot (router.Compile disables them and
// the API shows each with its error); the Problem gives file and line.
func TestInvalidObjectsAreKeptWithProblems(t *testing.T) {
	b := newBuilder(discard, false)
	s := b.build(context.Background(), []input{read(t, "invalid-objects.yml")})
	if got := routerNames(s); !slices.Equal(got, []string{"good", "noservice"}) {
		t.Errorf("routers %v, want [good noservice]", got)
	}
	if _, ok := s.Config.HTTP.Services["bad"]; !ok {
		t.Errorf("invalid service dropped: the API could not show its error")
	}
	want := []string{
		"error invalid-objects.yml:6:5: router noservice: service: empty; a router needs a service",
		`error invalid-objects.yml:12:5: service bad: loadBalancer.servers[0].url: "ftp://192.0.2.1": scheme must be http, https or h2c`,
	}
	if d := cmp.Diff(want, problems(s)); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
}

func TestDecodeErrorLocations(t *testing.T) {
	for _, tc := range []struct{ file, source, msg string }{
		{"unknown.toml", "unknown.toml:3:1", `unknown field "prio"`},
		{"unknown.json", "unknown.json:4:52", `unknown field "prio"`},
		{"broken.json", "broken.json:3:", "invalid character ','"},
		{"broken.toml", "broken.toml:2:", "toml: strings cannot contain newlines"},
		{"type.yml", "type.yml:5:7", "field http.routers.r.priority: cannot use string as int"},
		{"badtemplate.yml", "badtemplate.yml:4", `template: badtemplate.yml:4: unexpected "}" in operand`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			s := newBuilder(discard, false).build(context.Background(), []input{read(t, tc.file)})
			if len(s.Problems) != 1 {
				t.Fatalf("problems %v, want 1", problems(s))
			}
			p := s.Problems[0]
			if !strings.HasPrefix(p.Source, tc.source) || !strings.HasPrefix(p.Message, tc.msg) {
				t.Errorf("got %s %q, want source %s…, message %q…", p.Source, p.Message, tc.source, tc.msg)
			}
		})
	}
}

func TestTemplate(t *testing.T) {
	t.Setenv("GANTRY_TEST_HOSTS", "a.example.com, b.example.com")
	t.Setenv("GANTRY_TEST_SERVICE", "")
	s := newBuilder(discard, false).build(context.Background(), []input{read(t, "template.yml")})
	if len(s.Problems) != 0 {
		t.Fatalf("problems %v", problems(s))
	}
	if got, want := routerNames(s), []string{"n0", "n1", "n2", "r0", "r1"}; !slices.Equal(got, want) {
		t.Errorf("routers %v, want %v", got, want)
	}
	if r := s.Config.HTTP.Routers["r1"]; r.Rule != "Host(`b.example.com`)" || r.Service != "fallback" {
		t.Errorf("r1 = %+v, want trimmed host and default service", r)
	}
	if u := s.Config.HTTP.Services["fallback"].LoadBalancer.Servers[0].URL; u != "http://127.0.0.1:8001" {
		t.Errorf("url %s", u)
	}
}

func TestTemplateFuncs(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{{ default "x" "" }}`, "x"},
		{`{{ default "x" "y" }}`, "y"},
		{`{{ join "," (split ";" "a;b;c") }}`, "a,b,c"},
		{`{{ range split "," "p,q" }}[{{ . }}]{{ end }}`, "[p][q]"},
		{`{{ range seq 2 4 }}{{ . }}{{ end }}`, "234"},
		{`{{ upper "a" }}{{ lower "B" }}{{ replace "a" "b" "aa" }}`, "Abbb"},
		{`{{ if hasPrefix "/api" "/api/x" }}yes{{ end }}`, "yes"},
		{`{{ join "-" (list 1 "two") }}`, "1-two"},
		{`{{ quote "a\"b" }}`, `"a\"b"`},
		{`{{ trimPrefix "/" "/x" }}`, "x"},
	} {
		got, err := render(context.Background(), "t", []byte(tc.in), 1<<20)
		if err != nil || string(got) != tc.want {
			t.Errorf("render(%s) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestReadErrorKeepsLastGood(t *testing.T) {
	b := newBuilder(discard, false)
	in := read(t, "dup1.yml")
	b.build(context.Background(), []input{in})
	s := b.build(context.Background(), []input{{path: in.path, err: os.ErrPermission}})
	if _, ok := s.Config.HTTP.Routers["shared"]; !ok || len(s.Problems) != 1 {
		t.Errorf("routers %v problems %v; want shared kept and one problem", routerNames(s), problems(s))
	}
}

// An editor truncates before writing: the empty file in between is not
// applied (case 022: never publish a half-saved file).
func TestTruncatedToEmptyKeepsLastGood(t *testing.T) {
	b := newBuilder(discard, false)
	in := read(t, "dup1.yml")
	b.build(context.Background(), []input{in})
	s := b.build(context.Background(), []input{{path: in.path, data: []byte("\n")}})
	if _, ok := s.Config.HTTP.Routers["shared"]; !ok || len(s.Problems) != 1 || s.Problems[0].Severity != providers.SeverityWarning {
		t.Errorf("routers %v problems %v; want shared kept and one warning", routerNames(s), problems(s))
	}
	// A file that was empty from the start is just empty.
	s = newBuilder(discard, false).build(context.Background(), []input{{path: "new.yml"}})
	if len(s.Problems) != 0 {
		t.Errorf("problems %v for a new empty file", problems(s))
	}
}

// Each object's origin (file:line:col for YAML) travels with the snapshot,
// so routing problems found later (a bad rule, a missing service) can name
// where the object is defined.
func TestOriginsLocateObjects(t *testing.T) {
	b := newBuilder(discard, false)
	s := b.build(context.Background(), []input{read(t, "invalid-objects.yml"), read(t, "dup2.toml")})
	want := map[string]string{
		"router good":      "invalid-objects.yml:3:5",
		"router noservice": "invalid-objects.yml:6:5",
		"service s":        "invalid-objects.yml:9:5",
		"service bad":      "invalid-objects.yml:12:5",
		"rule router good": "invalid-objects.yml:4:13", // rule errors point at the rule (issue 15)
	}
	for k, v := range want {
		if s.Origins[k] != v {
			t.Errorf("origin of %s: got %q, want %q", k, s.Origins[k], v)
		}
	}
	if got := s.Origins["router other"]; got != "dup2.toml" {
		t.Errorf("TOML origin: got %q, want the file name", got)
	}
}

// Issue 15: an unknown field (or a wrong type) disables only the router,
// service or middleware that contains it; the rest of the file is used —
// unlike Traefik, which drops the file — and the problem names the field's
// line and the object.
func TestUnknownFieldDisablesOnlyItsObject(t *testing.T) {
	b := newBuilder(discard, false)
	a := as(read(t, "case022/a.yml"), "a.yml")
	b.build(context.Background(), []input{a, as(read(t, "case022/b.yml"), "b.yml")})
	s := b.build(context.Background(), []input{a, as(read(t, "case022/b-unknown.yml"), "b.yml")})
	if got := routerNames(s); !slices.Equal(got, []string{"a"}) {
		t.Errorf("routers %v, want [a]: router b has the unknown field", got)
	}
	if svc := s.Config.HTTP.Services["b"]; svc == nil || svc.LoadBalancer.Servers[0].URL != "http://192.0.2.99" {
		t.Errorf("service b = %+v, want the file's new content (http://192.0.2.99)", svc)
	}
	want := []string{`error b.yml:9:7: unknown field "domains"; router b left out (the rest of the file is used)`}
	if d := cmp.Diff(want, problems(s)); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
	if len(s.Problems) == 1 && !slices.Equal(s.Problems[0].Objects, []string{"router b"}) {
		t.Errorf("objects %v, want [router b]", s.Problems[0].Objects)
	}

	for _, tc := range []struct{ file, data, router, source, msg string }{
		{"x.toml", "[http.routers.bad]\nrule = \"Path(`/b`)\"\nprio = 3\nservice = \"s\"\n[http.routers.good]\nrule = \"Path(`/g`)\"\nservice = \"s\"\n",
			"good", "x.toml:3:1", `unknown field "prio"; router bad left out`},
		{"x.json", `{"http": {"routers": {"bad": {"rule": "Path(` + "`/b`" + `)", "service": "s", "prio": 1}, "good": {"rule": "Path(` + "`/g`" + `)", "service": "s", "priority": 2}}}}`,
			"good", "x.json:1:", `unknown field "prio"; router bad left out`},
		{"x.yml", "http:\n  middlewares:\n    m:\n      headers:\n        customRequestHeaders: {X: y}\n        nosuch: 1\n  routers:\n    good:\n      rule: Path(`/g`)\n      service: s\n",
			"good", "x.yml:6:9", `unknown field "nosuch"; middleware m left out`},
		{"y.yml", "http:\n  routers:\n    bad:\n      rule: Path(`/b`)\n      service: s\n      priority: high\n    good:\n      rule: Path(`/g`)\n      service: s\n",
			"good", "y.yml:6:7", `router bad left out`},
	} {
		s := newBuilder(discard, false).build(context.Background(), []input{{path: tc.file, data: []byte(tc.data)}})
		if got := routerNames(s); !slices.Equal(got, []string{tc.router}) {
			t.Errorf("%s: routers %v, want [%s]", tc.file, got, tc.router)
		}
		if len(s.Problems) != 1 || !strings.HasPrefix(s.Problems[0].Source, tc.source) || !strings.Contains(s.Problems[0].Message, tc.msg) {
			t.Errorf("%s: problems %v, want one at %s… saying %q", tc.file, problems(s), tc.source, tc.msg)
		}
	}
	// A syntax error is not inside an object: the file keeps failing whole.
	s = newBuilder(discard, false).build(context.Background(), []input{{path: "z.yml", data: []byte("http:\n  routers: [\n")}})
	if len(s.Problems) != 1 || !strings.Contains(s.Problems[0].Message, "nothing from this file is used") {
		t.Errorf("syntax error: %v", problems(s))
	}
}

// Issue 15: a YAML syntax error is reported at the line the user must
// edit, not where yaml.v3 says the construct began.
func TestYAMLSyntaxErrorLine(t *testing.T) {
	for _, tc := range []struct{ data, source, msg string }{
		{"http:\n  routers:\n    a:\n      rule: Host(`a`)\n      service: [x\n    b:\n      rule: x\n", "x.yml:5", "line 5: did not find expected ',' or ']'"},
		{"http:\n  routers:\n    a:\n      rule: x\n     service: s\n", "x.yml:5", "line 5: did not find expected key"},
		{"http:\n  routers:\n    a:\n      rule: x\n      service: s\n    b:\n      rule: y\n      service: s\n  services:\n    s:\n\tloadBalancer: {}\n", "x.yml:11", "line 11: found character that cannot start any token"},
		{"http:\n  routers:\n    a:\n      rule: Host(`a`)\n    bad line here: : :\n", "x.yml:5", "line 5: mapping values are not allowed"},
	} {
		s := newBuilder(discard, false).build(context.Background(), []input{{path: "x.yml", data: []byte(tc.data)}})
		if len(s.Problems) != 1 || s.Problems[0].Source != tc.source || !strings.Contains(s.Problems[0].Message, tc.msg) {
			t.Errorf("%q: problems %v, want source %s, message with %q", tc.data, problems(s), tc.source, tc.msg)
		}
	}
}

// The same isolation holds in the tcp and udp sections (README, TCP and
// UDP: "a bad key ... disables only its object"): an unknown field in one
// TCP router leaves out that router only, named at the field's line, and
// the HTTP, TCP and UDP objects beside it are used.
func TestUnknownFieldInTCPAndUDPDisablesOnlyItsObject(t *testing.T) {
	data := "http:\n  routers:\n    web:\n      rule: Path(`/`)\n      service: s\n" +
		"tcp:\n  routers:\n    good:\n      rule: HostSNI(`*`)\n      service: db\n    bad:\n      rule: HostSNI(`*`)\n      service: db\n      bogus: 1\n" +
		"  services:\n    db:\n      loadBalancer:\n        servers:\n          - address: 127.0.0.1:5432\n    wrong:\n      loadBalancer:\n        servers: \"127.0.0.1:1\"\n" +
		"udp:\n  routers:\n    dns:\n      service: u\n      nosuch: x\n  services:\n    u:\n      loadBalancer:\n        servers:\n          - address: 127.0.0.1:53\n"
	s := newBuilder(discard, false).build(context.Background(), []input{{path: "t.yml", data: []byte(data)}})
	if got := routerNames(s); !slices.Equal(got, []string{"web"}) {
		t.Errorf("http routers %v, want [web]", got)
	}
	if s.Config.TCP == nil || s.Config.TCP.Routers["good"] == nil || s.Config.TCP.Routers["bad"] != nil ||
		s.Config.TCP.Services["db"] == nil || s.Config.TCP.Services["wrong"] != nil {
		t.Fatalf("tcp = %+v, want router good and service db only", s.Config.TCP)
	}
	if s.Config.UDP == nil || s.Config.UDP.Routers["dns"] != nil || s.Config.UDP.Services["u"] == nil {
		t.Errorf("udp = %+v, want service u without router dns", s.Config.UDP)
	}
	got := problems(s)
	for _, want := range []string{
		`error t.yml:14:7: unknown field "bogus"; tcpRouter bad left out (the rest of the file is used)`,
		`tcpService wrong left out (the rest of the file is used)`,
		`error t.yml:27:7: unknown field "nosuch"; udpRouter dns left out (the rest of the file is used)`,
	} {
		if !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, want) }) {
			t.Errorf("problems %q lack %q", got, want)
		}
	}
}

// entryPoints in a dynamic file ask for dynamic entrypoints, located by
// file; the same name in a second file is skipped with a warning, as for
// any object.
func TestEntryPointsInFiles(t *testing.T) {
	b := newBuilder(discard, false)
	s := b.build(context.Background(), []input{
		{path: "a.yml", data: []byte("entryPoints:\n  shop: {address: \":8001\"}\n")},
		{path: "b.yml", data: []byte("entryPoints:\n  shop: {address: \":8002\"}\n  db: {address: \":8003\"}\n")},
	})
	eps := s.Config.EntryPoints
	if len(eps) != 2 || eps["shop"].Address != ":8001" || eps["db"].Address != ":8003" {
		t.Errorf("entrypoints: %v", eps)
	}
	if s.Origins["entrypoint shop"] != "a.yml" || s.Origins["entrypoint db"] != "b.yml" {
		t.Errorf("origins: %v", s.Origins)
	}
	if ps := problems(s); len(ps) != 1 || !strings.Contains(ps[0], `entrypoint "shop" is already defined in a.yml`) {
		t.Errorf("problems: %v", ps)
	}
}

// TestFileErrorAndObjectErrorsTogether: a file with an unknown top-level
// key and a router with an unknown field fails as a file (its last good
// content stays), and both are reported at their lines, not only the first
// (a new user fixed one and met the next).
func TestFileErrorAndObjectErrorsTogether(t *testing.T) {
	b := newBuilder(discard, false)
	good := "http:\n  routers:\n    a:\n      rule: Path(`/a`)\n      service: s\n  services:\n    s:\n      loadBalancer:\n        servers: [{url: http://192.0.2.1}]\n"
	b.build(context.Background(), []input{{path: "f.yml", data: []byte(good)}})
	bad := "htp:\n  x: 1\nhttp:\n  routers:\n    a:\n      rule: Path(`/a`)\n      service: s\n      prio: 3\n  services:\n    s:\n      loadBalancer:\n        servers: [{url: http://192.0.2.1}]\n"
	s := b.build(context.Background(), []input{{path: "f.yml", data: []byte(bad)}})
	if got := routerNames(s); !slices.Equal(got, []string{"a"}) {
		t.Errorf("routers %v, want [a] (the last good content)", got)
	}
	want := []string{
		`error f.yml:1:1: unknown field "htp"; keeping the last good content of this file`,
		`error f.yml:8:7: unknown field "prio"; router a also wrong`,
	}
	if d := cmp.Diff(want, problems(s)); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
}

package kubegateway

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/gantry-proxy/gantry/integration/harness"
	"github.com/gantry-proxy/gantry/providers/kubernetes/gateway"
)

const confDir = "testdata/conformance"

// confTest and confCase mirror confgen's Test and Case.
type confTest struct {
	ShortName string     `json:"shortName"`
	File      string     `json:"file"`
	Features  []string   `json:"features"`
	Manifests []string   `json:"manifests"`
	Cases     []confCase `json:"cases"`
}

type confCase struct {
	Request                   map[string]any    `json:"request"`
	ExpectedRequest           map[string]any    `json:"expectedRequest"`
	RedirectRequest           map[string]any    `json:"redirectRequest"`
	Response                  map[string]any    `json:"response"`
	BackendSetResponseHeaders map[string]string `json:"backendSetResponseHeaders"`
	Backend                   string            `json:"backend"`
	Namespace                 string            `json:"namespace"`
	MirroredTo                []any             `json:"mirroredTo"`
	Line                      int               `json:"line"`
	Unsupported               string            `json:"unsupported"`
}

// portByLine sends the cases of a test that uses several Gateways to the
// right port, by where the case is written in the test's Go file (its
// code loops over each group with another gateway address): cases up to
// line upto go to port; port 0 means HTTPS, which the runner does not do.
var portByLine = map[string][]struct{ upto, port int }{
	"HTTPRouteRedirectPortAndScheme": {{163, 80}, {215, 8080}, {1 << 30, 0}},
}

// portFromHost are the tests whose code picks the Gateway address by the
// port in the request's Host (one listener per port).
var portFromHost = map[string]bool{"HTTPRouteListenerPortMatching": true}

// stepsBefore are kubectl commands a test's code runs before its case i.
var stepsBefore = map[string]map[int][][]string{
	"HTTPRouteReferenceGrant": {1: {{"delete", "referencegrant", "reference-grant", "-n", "gateway-conformance-web-backend"}}},
}

// notRun are tests whose checks are not requests the runner can make,
// with the reason.
var notRun = map[string]string{
	"HTTPRouteWeight":                   "checks a traffic distribution over many requests, not single responses",
	"HTTPRouteBackendProtocolWebSocket": "its requests are WebSocket exchanges, written in code",
	"HTTPRouteRetry":                    "its requests are written in code (retry counting)",
}

// TestConformanceHTTP applies each HTTPRoute conformance test's manifests,
// serves its Deployments with local echo backends and EndpointSlices,
// sends its expected requests through Gantry and checks the responses as
// the suite does (every case must hold 3 times in a row within 60 s).
// Tests listed in testdata/conformance/expected-pass.txt must pass; the
// others are reported with the reason.
func TestConformanceHTTP(t *testing.T) {
	var tests []confTest
	b, err := os.ReadFile(filepath.Join(confDir, "tests.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &tests); err != nil {
		t.Fatal(err)
	}
	mustPass := map[string]bool{}
	if b, err := os.ReadFile(filepath.Join(confDir, "expected-pass.txt")); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				mustPass[l] = true
			}
		}
	}
	supported := map[string]bool{}
	for _, f := range gateway.SupportedFeatures(false) {
		supported[string(f.Name)] = true
	}

	e := start(t, "")
	e.gatewayClass(t)
	r := &runner{e: e, echoes: map[string]*echo{}}
	r.apply(t, "base/manifests.yaml")

	type outcome struct{ name, result, why string }
	var outcomes []outcome
	for _, ct := range tests {
		res, why := "", ""
		t.Run(ct.ShortName, func(t *testing.T) {
			res, why = r.runTest(t, ct, supported)
			if res == "fail" && mustPass[ct.ShortName] {
				t.Errorf("%s: %s", ct.ShortName, why)
			}
		})
		outcomes = append(outcomes, outcome{ct.ShortName, res, why})
	}
	sort.Slice(outcomes, func(i, j int) bool { return outcomes[i].name < outcomes[j].name })
	var sb strings.Builder
	counts := map[string]int{}
	for _, o := range outcomes {
		counts[o.result]++
		fmt.Fprintf(&sb, "| %s | %s | %s |\n", o.name, o.result, strings.ReplaceAll(o.why, "|", "/"))
	}
	t.Logf("conformance: %d pass, %d fail, %d not run\n%s", counts["pass"], counts["fail"], counts["not run"], sb.String())
	if out := os.Getenv("GANTRY_CONFORMANCE_REPORT"); out != "" {
		_ = os.WriteFile(out, []byte(sb.String()), 0o644)
	}
}

// runner holds the echo backends, keyed "namespace/deployment".
type runner struct {
	e      *env
	echoes map[string]*echo
	seq    int
}

// apply applies a manifest file of the suite (GatewayClass name filled
// in) and serves its Deployments.
func (r *runner) apply(t *testing.T, name string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(confDir, "manifests", strings.ReplaceAll(name, "/", "_")))
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.ReplaceAll(string(b), "{GATEWAY_CLASS_NAME}", "gantry")
	r.e.k.Apply(t, doc)
	objs := splitYAML(t, doc)
	r.serve(t, objs)
	return objs
}

func splitYAML(t *testing.T, doc string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, part := range strings.Split("\n"+doc, "\n---") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(part), &m); err != nil {
			t.Fatalf("manifest: %v", err)
		}
		if m != nil {
			out = append(out, m)
		}
	}
	return out
}

func str(m map[string]any, path ...string) string {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = mm[p]
	}
	s, _ := cur.(string)
	return s
}

func sub(m map[string]any, path ...string) map[string]any {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[p]
	}
	mm, _ := cur.(map[string]any)
	return mm
}

// serve starts an echo for each Deployment (pod "<name>-<n>") and writes,
// for each Service whose selector picks a Deployment's pods, an
// EndpointSlice naming that echo on every Service port, as the
// Deployment and endpoint-slice controllers would.
func (r *runner) serve(t *testing.T, objs []map[string]any) {
	t.Helper()
	type dep struct {
		key    string
		labels map[string]any
	}
	var deps []dep
	for _, o := range objs {
		if str(o, "kind") != "Deployment" {
			continue
		}
		ns, name := str(o, "metadata", "namespace"), str(o, "metadata", "name")
		key := ns + "/" + name
		if _, ok := r.echoes[key]; !ok {
			r.seq++
			r.echoes[key] = startEcho(t, r.e.ip, ns, fmt.Sprintf("%s-%d", name, r.seq))
		}
		deps = append(deps, dep{key, sub(o, "spec", "template", "metadata", "labels")})
	}
	for _, o := range objs {
		if str(o, "kind") != "Service" {
			continue
		}
		ns, name := str(o, "metadata", "namespace"), str(o, "metadata", "name")
		sel := sub(o, "spec", "selector")
		if len(sel) == 0 {
			continue
		}
		var ech *echo
		for k, ec := range r.echoes {
			if !strings.HasPrefix(k, ns+"/") {
				continue
			}
			for _, d := range deps {
				if d.key == k && matches(sel, d.labels) {
					ech = ec
				}
			}
		}
		if ech == nil {
			continue
		}
		var ports []harness.SlicePort
		list, _ := sub(o, "spec")["ports"].([]any)
		for _, p := range list {
			pm, _ := p.(map[string]any)
			ports = append(ports, harness.SlicePort{Name: str(pm, "name"), Port: int32(ech.port)})
		}
		r.e.k.SetEndpoints(t, ns, name, name+"-conformance", ports, harness.ReadyEndpoint(r.e.ip))
	}
}

func matches(sel, labels map[string]any) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// runTest runs one conformance test: "pass", "fail" or "not run", and why.
func (r *runner) runTest(t *testing.T, ct confTest, supported map[string]bool) (string, string) {
	for _, f := range ct.Features {
		if !supported[f] {
			return "not run", "feature " + f + " is not claimed"
		}
	}
	if why, ok := notRun[ct.ShortName]; ok {
		return "not run", why
	}
	if len(ct.Cases) == 0 {
		return "not run", "status checks only (no request cases)"
	}
	var objs []map[string]any
	for _, m := range ct.Manifests {
		objs = append(objs, r.apply(t, m)...)
	}
	defer r.cleanup(t, objs)
	skipped := 0
	for i, c := range ct.Cases {
		if c.Unsupported != "" {
			skipped++
			continue
		}
		port := 80
		if host := str(c.Request, "Host"); portFromHost[ct.ShortName] && strings.Contains(host, ":") {
			_, p, _ := net.SplitHostPort(host)
			port, _ = strconv.Atoi(p)
		}
		for _, args := range stepsBefore[ct.ShortName][i] {
			r.e.k.Kubectl(t, args...)
		}
		for _, g := range portByLine[ct.ShortName] {
			if c.Line <= g.upto {
				port = g.port
				break
			}
		}
		if port == 0 {
			skipped++
			continue
		}
		if err := r.eventually(c, port); err != nil {
			return "fail", fmt.Sprintf("case %d (line %d): %v", i, c.Line, err)
		}
	}
	if skipped == len(ct.Cases) {
		return "not run", "no case the runner can send (HTTPS, or not evaluable from the test's code)"
	}
	if skipped > 0 {
		return "pass", fmt.Sprintf("%d of %d cases not run (HTTPS or not evaluable)", skipped, len(ct.Cases))
	}
	return "pass", ""
}

// cleanup deletes a test's objects (not its namespaces: without a
// controller manager they would stay Terminating).
func (r *runner) cleanup(t *testing.T, objs []map[string]any) {
	for _, o := range objs {
		kind := str(o, "kind")
		if kind == "Namespace" || kind == "" {
			continue
		}
		args := []string{"delete", "--ignore-not-found", "--wait=false", strings.ToLower(kind) + "." + groupOf(str(o, "apiVersion")), str(o, "metadata", "name")}
		if ns := str(o, "metadata", "namespace"); ns != "" {
			args = append(args, "-n", ns)
		}
		if _, err := r.e.k.KubectlIn("", args...); err != nil {
			t.Logf("cleanup: %v", err)
		}
	}
}

func groupOf(apiVersion string) string {
	if g, _, ok := strings.Cut(apiVersion, "/"); ok {
		return g
	}
	return ""
}

// eventually sends the case's request until the check holds 3 times in a
// row (the suite's RequiredConsecutiveSuccesses), for at most 60 s.
func (r *runner) eventually(c confCase, port int) error {
	deadline := time.Now().Add(60 * time.Second)
	ok := 0
	var last error
	for time.Now().Before(deadline) {
		if last = r.check(c, port); last == nil {
			ok++
			if ok == 3 {
				return nil
			}
			continue
		}
		ok = 0
		time.Sleep(200 * time.Millisecond)
	}
	return last
}

var confClient = &http.Client{
	Timeout:       10 * time.Second,
	Transport:     &http.Transport{DisableKeepAlives: true},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

package ingressnginx

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/gantry-proxy/gantry/config"
)

const r0 = "default-x-rule-0-path-0"

func one(t *testing.T, cl *fakeCluster, o Options, kv ...string) Result {
	t.Helper()
	return translate(t, cl, o, ing("x", "a.test", "/", "app", kv...))
}

func TestBackendProtocol(t *testing.T) {
	for proto, want := range map[string]string{"HTTP": "http://", "HTTPS": "https://", "GRPC": "h2c://", "grpcs": "https://"} {
		res := one(t, nil, Options{}, "backend-protocol", proto)
		lb := res.Config.HTTP.Services[r0].LoadBalancer
		if !strings.HasPrefix(lb.Servers[0].URL, want) {
			t.Errorf("%s: server %s", proto, lb.Servers[0].URL)
		}
		tls := strings.HasPrefix(want, "https")
		if st := res.Config.HTTP.ServersTransports[lb.ServersTransport]; tls != (st != nil && st.InsecureSkipVerify) {
			t.Errorf("%s: transport %q %+v", proto, lb.ServersTransport, st)
		}
	}
	res := one(t, nil, Options{}, "backend-protocol", "FCGI")
	problemWith(t, res, "default/x annotation nginx.ingress.kubernetes.io/backend-protocol", `"FCGI" is not served`)
}

func TestProxyTimeouts(t *testing.T) {
	res := one(t, nil, Options{}, "proxy-connect-timeout", "3", "proxy-read-timeout", "120", "proxy-send-timeout", "30")
	st := res.Config.HTTP.ServersTransports[res.Config.HTTP.Services[r0].LoadBalancer.ServersTransport]
	if st == nil || st.ForwardingTimeouts.DialTimeout.Or(0) != 3*time.Second || st.ForwardingTimeouts.ResponseHeaderTimeout.Or(0) != 120*time.Second {
		t.Fatalf("transport %+v", st)
	}
	res = one(t, nil, Options{}, "proxy-read-timeout", "10s")
	problemWith(t, res, "proxy-read-timeout", `"10s" is not a whole number`)
}

func TestAuthURL(t *testing.T) {
	res := one(t, nil, Options{}, "auth-url", "http://auth.test/verify", "auth-response-headers", "X-User, X-Email", "auth-signin", "https://login.test/start")
	fa := mw(t, res, r0, "-auth-url").ForwardAuth
	if fa.Address != "http://auth.test/verify" || !slices.Equal(fa.AuthResponseHeaders, []string{"X-User", "X-Email"}) {
		t.Fatalf("forwardAuth %+v", fa)
	}
	e := mw(t, res, r0, "-auth-signin").Errors
	if e == nil || e.StatusRewrites["401"] != 302 || !slices.Equal(e.Status, []string{"401"}) {
		t.Fatalf("errors %+v", e)
	}
	// The sign-in middleware comes before (around) forwardAuth.
	ms := res.Config.HTTP.Routers[r0].Middlewares
	if slices.Index(ms, r0+"-auth-signin") > slices.Index(ms, r0+"-auth-url") {
		t.Errorf("order %v", ms)
	}
	svc := res.Config.HTTP.Services[e.Service]
	rr := res.Config.HTTP.Middlewares[svc.Middlewares[0]].RedirectRegex
	got := regexp.MustCompile(rr.Regex).ReplaceAllString("http://a.test/?rd=http%3A%2F%2Fa.test%2Fx", rr.Replacement)
	if got != "https://login.test/start?rd=http%3A%2F%2Fa.test%2Fx" {
		t.Errorf("sign-in redirect %s", got)
	}
	// A variable in the URL is refused, and the paths answer 503.
	res = one(t, nil, Options{}, "auth-url", "http://auth.test/verify?host=$host")
	problemWith(t, res, "default/x annotation nginx.ingress.kubernetes.io/auth-url", "nginx variables")
	if res.Config.HTTP.Routers[r0].Service != unavailable {
		t.Errorf("denied Ingress routed to %s", res.Config.HTTP.Routers[r0].Service)
	}
}

func TestBasicAuth(t *testing.T) {
	cl := newCluster()
	cl.secrets["default/users"] = &corev1.Secret{Data: map[string][]byte{"auth": []byte("# users\nalice:$apr1$abc$def\nbob:{SHA}xyz=\n")}}
	cl.secrets["default/map"] = &corev1.Secret{Data: map[string][]byte{"carol": []byte("$2y$05$abcdefghijklmnopqrstuv")}}
	cl.secrets["default/des"] = &corev1.Secret{Data: map[string][]byte{"auth": []byte("dave:abDES12345678")}}
	cl.secrets["other/users"] = cl.secrets["default/users"]
	res := one(t, cl, Options{}, "auth-type", "basic", "auth-secret", "users", "auth-realm", "Staff only")
	ba := mw(t, res, r0, "-basic-auth").BasicAuth
	if !slices.Equal(ba.Users, []string{"alice:$apr1$abc$def", "bob:{SHA}xyz="}) || ba.Realm != "Staff only" {
		t.Fatalf("basicAuth %+v", ba)
	}
	res = one(t, cl, Options{}, "auth-type", "basic", "auth-secret", "default/map", "auth-secret-type", "auth-map")
	if ba := mw(t, res, r0, "-basic-auth").BasicAuth; !slices.Equal(ba.Users, []string{"carol:$2y$05$abcdefghijklmnopqrstuv"}) {
		t.Fatalf("auth-map %+v", ba)
	}
	for _, c := range []struct{ secret, want string }{
		{"missing", "secret default/missing not found"},
		{"des", "user 1 is not user:hash"},
		{"other/users", "another namespace"},
	} {
		res = one(t, cl, Options{}, "auth-type", "basic", "auth-secret", c.secret)
		p := problemWith(t, res, "default/x", "auth-secret", c.want)
		if p.Severity != "error" {
			t.Errorf("%s: severity %s", c.secret, p.Severity)
		}
		if res.Config.HTTP.Routers[r0].Service != unavailable || res.Config.HTTP.Routers[r0+"-tls"].Service != unavailable {
			t.Errorf("%s: paths not denied", c.secret)
		}
		if v := verdict(t, res, "x", "auth-secret"); v.Support != Refused || !v.Critical {
			t.Errorf("%s: verdict %+v", c.secret, v)
		}
	}
	res = one(t, cl, Options{AllowCrossNamespaceResources: true}, "auth-type", "basic", "auth-secret", "other/users")
	if mw(t, res, r0, "-basic-auth") == nil {
		t.Error("cross-namespace secret refused with allowCrossNamespaceResources")
	}
	res = one(t, cl, Options{}, "auth-type", "basic")
	problemWith(t, res, "auth-type", "auth-secret is missing")
}

func TestWhitelistSourceRange(t *testing.T) {
	res := one(t, nil, Options{}, "whitelist-source-range", "10.0.0.0/8, 192.168.1.7")
	if al := mw(t, res, r0, "-allowed-source-range").IPAllowList; !slices.Equal(al.SourceRange, []string{"10.0.0.0/8", "192.168.1.7"}) {
		t.Fatalf("ipAllowList %+v", al)
	}
	res = one(t, nil, Options{}, "whitelist-source-range", "10.0.0.0/8,not-an-ip")
	problemWith(t, res, "default/x annotation nginx.ingress.kubernetes.io/whitelist-source-range", `"not-an-ip"`)
	if res.Config.HTTP.Routers[r0].Service != unavailable {
		t.Error("a refused allow list left the paths open")
	}
}

func TestProxyBodySize(t *testing.T) {
	for v, want := range map[string]int64{"8m": 8 << 20, "512k": 512 << 10, "1g": 1 << 30, "100": 100} {
		res := one(t, nil, Options{}, "proxy-body-size", v)
		if b := mw(t, res, r0, "-body-size"); b == nil || b.Buffering.MaxRequestBodyBytes != want {
			t.Errorf("%s: %+v", v, b)
		}
	}
	if mw(t, one(t, nil, Options{}, "proxy-body-size", "0"), r0, "-body-size") != nil {
		t.Error("0 (no limit) made a limit")
	}
	problemWith(t, one(t, nil, Options{}, "proxy-body-size", "8 MB"), "proxy-body-size", "not an nginx size")
	problemWith(t, one(t, nil, Options{}, "proxy-body-size", "99999999999999999g"), "proxy-body-size")
}

func TestAffinityCookie(t *testing.T) {
	res := translate(t, nil, Options{}, ing("x", "a.test", "/shop", "app", "affinity", "cookie"))
	c := res.Config.HTTP.Services[r0].LoadBalancer.Sticky.Cookie
	if c.Name != "INGRESSCOOKIE" || *c.Path != "/shop" || !c.HTTPOnly || c.Secure {
		t.Fatalf("default cookie %+v", c)
	}
	res = one(t, nil, Options{}, "affinity", "cookie", "session-cookie-name", "route", "session-cookie-path", "/", "session-cookie-secure", "true",
		"session-cookie-samesite", "Strict", "session-cookie-max-age", "3600", "session-cookie-domain", ".a.test")
	c = res.Config.HTTP.Services[r0].LoadBalancer.Sticky.Cookie
	if c.Name != "route" || *c.Path != "/" || !c.Secure || c.SameSite != "strict" || c.MaxAge != 3600 || c.Domain != ".a.test" {
		t.Fatalf("cookie %+v", c)
	}
	// A terminating pod that still serves keeps the sessions pinned to it
	// and gets no new one (fenced).
	cl := newCluster()
	cl.fenced = map[string][]string{"default/app": {"10.244.0.9:8080"}}
	res = translate(t, cl, Options{}, ing("x", "a.test", "/shop", "app", "affinity", "cookie"))
	if s := res.Config.HTTP.Services[r0].LoadBalancer.Servers; len(s) != 2 || s[0].Fenced || s[1] != (config.Server{URL: "http://10.244.0.9:8080", Fenced: true}) {
		t.Errorf("servers %+v, want the ready endpoint then the terminating one fenced", s)
	}
	res = one(t, nil, Options{}, "affinity", "ip")
	problemWith(t, res, "affinity", `"ip" is not cookie`)
	if res.Config.HTTP.Services[r0].LoadBalancer.Sticky != nil {
		t.Error("sticky without cookie affinity")
	}
}

func TestCORS(t *testing.T) {
	h := mw(t, one(t, nil, Options{}, "enable-cors", "true"), r0, "-cors").Headers
	if !slices.Equal(h.AccessControlAllowOriginList, []string{"*"}) || !slices.Equal(h.AccessControlAllowMethods, corsDefaultMethods) ||
		!slices.Equal(h.AccessControlAllowHeaders, corsDefaultHeaders) || !h.AccessControlAllowCredentials || h.AccessControlMaxAge != 1728000 {
		t.Fatalf("defaults %+v", h)
	}
	h = mw(t, one(t, nil, Options{}, "enable-cors", "true", "cors-allow-origin", "https://app.test, https://*.corp.test:8443",
		"cors-allow-methods", "GET, POST", "cors-allow-headers", "X-Token", "cors-expose-headers", "X-Total", "cors-allow-credentials", "false", "cors-max-age", "600"), r0, "-cors").Headers
	if !slices.Equal(h.AccessControlAllowOriginList, []string{"https://app.test"}) || len(h.AccessControlAllowOriginListRegex) != 1 ||
		!slices.Equal(h.AccessControlAllowMethods, []string{"GET", "POST"}) || h.AccessControlAllowCredentials || h.AccessControlMaxAge != 600 ||
		!slices.Equal(h.AccessControlExposeHeaders, []string{"X-Total"}) || !slices.Equal(h.AccessControlAllowHeaders, []string{"X-Token"}) {
		t.Fatalf("options %+v", h)
	}
	re := regexp.MustCompile(h.AccessControlAllowOriginListRegex[0])
	if !re.MatchString("https://a.corp.test:8443") || re.MatchString("https://a.b.corp.test:8443") || re.MatchString("https://corp.test:8443") {
		t.Errorf("wildcard origin %s", re)
	}
	if mw(t, one(t, nil, Options{}, "cors-allow-origin", "https://x.test"), r0, "-cors") != nil {
		t.Error("CORS without enable-cors")
	}
	problemWith(t, one(t, nil, Options{}, "enable-cors", "true", "cors-allow-methods", "GET, P OST"), "cors-allow-methods")
}

func TestLimits(t *testing.T) {
	res := one(t, nil, Options{}, "limit-rps", "10", "limit-rpm", "300", "limit-connections", "4", "limit-burst-multiplier", "3")
	rps := mw(t, res, r0, "-limit-rps").RateLimit
	if rps.Average != 10 || rps.Burst != 30 || rps.Period != config.Duration(time.Second) {
		t.Errorf("rps %+v", rps)
	}
	rpm := mw(t, res, r0, "-limit-rpm").RateLimit
	if rpm.Average != 300 || rpm.Burst != 900 || rpm.Period != config.Duration(time.Minute) {
		t.Errorf("rpm %+v", rpm)
	}
	if c := mw(t, res, r0, "-limit-connections").InFlightReq; c.Amount != 4 {
		t.Errorf("connections %+v", c)
	}
	// ingress-nginx's order: connections, rpm, rps.
	ms := res.Config.HTTP.Routers[r0].Middlewares
	if !(slices.Index(ms, r0+"-limit-connections") < slices.Index(ms, r0+"-limit-rpm") && slices.Index(ms, r0+"-limit-rpm") < slices.Index(ms, r0+"-limit-rps")) {
		t.Errorf("order %v", ms)
	}
	if rl := mw(t, one(t, nil, Options{}, "limit-rps", "5"), r0, "-limit-rps").RateLimit; rl.Burst != 25 {
		t.Errorf("default burst multiplier: %+v", rl)
	}
	problemWith(t, one(t, nil, Options{}, "limit-rps", "lots"), "limit-rps", "not a whole number")
}

func TestCustomHeaders(t *testing.T) {
	cl := newCluster()
	cl.configMaps["default/headers"] = &corev1.ConfigMap{Data: map[string]string{"X-Frame-Options": "DENY", "X-Team": "payments"}}
	o := Options{GlobalAllowedResponseHeaders: []string{"x-frame-options", "X-Team"}}
	res := one(t, cl, o, "custom-headers", "default/headers")
	if h := mw(t, res, r0, "-custom-headers").Headers.CustomResponseHeaders; h["X-Frame-Options"] != "DENY" || h["X-Team"] != "payments" {
		t.Fatalf("headers %+v", h)
	}
	res = one(t, cl, Options{GlobalAllowedResponseHeaders: []string{"X-Team"}}, "custom-headers", "default/headers")
	problemWith(t, res, "default/x annotation nginx.ingress.kubernetes.io/custom-headers", `"X-Frame-Options" is not in globalAllowedResponseHeaders`)
	if mw(t, res, r0, "-custom-headers") != nil || res.Config.HTTP.Routers[r0].Service == unavailable {
		t.Error("refused custom-headers: want served without them")
	}
	problemWith(t, one(t, cl, o, "custom-headers", "headers"), "custom-headers", "not namespace/name")
	problemWith(t, one(t, cl, o, "custom-headers", "default/none"), "custom-headers", "not found")
}

func TestRedirects(t *testing.T) {
	rr := mw(t, one(t, nil, Options{}, "permanent-redirect", "https://new.test/landing"), r0, "-redirect").RedirectRegex
	if !rr.Permanent || regexp.MustCompile(rr.Regex).ReplaceAllString("http://a.test/any/path?q=1", rr.Replacement) != "https://new.test/landing" {
		t.Errorf("permanent %+v", rr)
	}
	rr = mw(t, one(t, nil, Options{}, "temporal-redirect", "https://tmp.test/", "permanent-redirect", "https://new.test/"), r0, "-redirect").RedirectRegex
	if rr.Permanent || rr.Replacement != "https://tmp.test/" {
		t.Errorf("temporal takes precedence: %+v", rr)
	}
	res := one(t, nil, Options{}, "permanent-redirect", "https://new.test/", "permanent-redirect-code", "302")
	if v := verdict(t, res, "x", "permanent-redirect-code"); v.Support != Approximated {
		t.Errorf("verdict %+v", v)
	}
	problemWith(t, one(t, nil, Options{}, "permanent-redirect", "https://$host/"), "permanent-redirect", "nginx variables")
}

func TestAppRoot(t *testing.T) {
	rr := mw(t, one(t, nil, Options{}, "app-root", "/app1"), r0, "-app-root").RedirectRegex
	re := regexp.MustCompile(rr.Regex)
	for in, want := range map[string]string{"http://a.test/": "http://a.test/app1", "https://a.test:8443/?x=1": "https://a.test:8443/app1", "http://a.test/other": ""} {
		got := ""
		if re.MatchString(in) {
			got = re.ReplaceAllString(in, rr.Replacement)
		}
		if got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
	problemWith(t, one(t, nil, Options{}, "app-root", "app1"), "app-root", "not an absolute path")
}

func TestUpstreamVHost(t *testing.T) {
	h := mw(t, one(t, nil, Options{}, "upstream-vhost", "internal.svc:8080"), r0, "-upstream-vhost").Headers
	if h.CustomRequestHeaders["Host"] != "internal.svc:8080" {
		t.Fatalf("headers %+v", h)
	}
	problemWith(t, one(t, nil, Options{}, "upstream-vhost", "$service_name.local"), "upstream-vhost", "nginx variables")
	// The rewrite runs after the access checks, as nginx's rewrite ... break.
	ms := translate(t, nil, Options{}, ing("x", "a.test", "/", "app", "upstream-vhost", "b.test", "rewrite-target", "/new", "whitelist-source-range", "10.0.0.0/8")).Config.HTTP.Routers[r0].Middlewares
	if !strings.HasSuffix(ms[len(ms)-1], "-rewrite-target") || !strings.HasSuffix(ms[0], "-allowed-source-range") {
		t.Errorf("order %v", ms)
	}
}

// Snippets are raw nginx configuration: refused, and the Ingress's paths
// answer 503 with a problem naming it (as Traefik refuses the Ingress).
func TestSnippetsRefused(t *testing.T) {
	for _, a := range []string{"configuration-snippet", "server-snippet", "auth-snippet"} {
		res := one(t, nil, Options{}, a, "more_set_headers \"X: y\";", "enable-cors", "true")
		p := problemWith(t, res, "ingress default/x annotation nginx.ingress.kubernetes.io/"+a, "refused", "503")
		if p.Severity != "error" {
			t.Errorf("%s: severity %s", a, p.Severity)
		}
		if res.Config.HTTP.Routers[r0].Service != unavailable || len(res.Config.HTTP.Routers[r0].Middlewares) != 0 {
			t.Errorf("%s: router %+v", a, res.Config.HTTP.Routers[r0])
		}
		if res.Report.Ingresses[0].Status != "denied" {
			t.Errorf("%s: report %+v", a, res.Report.Ingresses[0])
		}
	}
}

// A stranger's annotation values have limits and errors naming the
// Ingress and annotation.
func TestHostileValues(t *testing.T) {
	long := strings.Repeat("a", maxValueBytes+1)
	p := problemWith(t, one(t, nil, Options{}, "upstream-vhost", long), "default/x annotation nginx.ingress.kubernetes.io/upstream-vhost", "over the 4096-byte limit")
	if strings.Contains(p.Message, long[:200]) {
		t.Error("problem repeats the whole value")
	}
	many := strings.TrimSuffix(strings.Repeat("10.0.0.1,", maxListItems+1), ",")
	res := one(t, nil, Options{}, "whitelist-source-range", many)
	problemWith(t, res, "whitelist-source-range", "over the 64-item limit")
	if res.Config.HTTP.Routers[r0].Service != unavailable {
		t.Error("over-long allow list left the paths open")
	}
	res = one(t, nil, Options{}, "mirror-target", "https://m.test")
	problemWith(t, res, "mirror-target", "not translated by Gantry", "served without it")
	problemWith(t, one(t, nil, Options{}, "enable-cors", "yes please"), "enable-cors", "not true or false")
	res = translate(t, nil, Options{}, ing("x", "a.test", "/"+strings.Repeat("p", maxPathBytes), "app"))
	problemWith(t, res, "default/x", "over the 1024-byte limit")
}

func TestReportTotals(t *testing.T) {
	res := translate(t, nil, Options{},
		ing("plain", "a.test", "/", "app"),
		ing("exact", "b.test", "/", "app", "use-regex", "true", "rewrite-target", "/"),
		ing("approx", "c.test", "/", "app", "limit-rps", "5"),
		ing("refused", "d.test", "/", "app", "configuration-snippet", "x"),
	)
	want := Totals{Ingresses: 4, Annotations: 4, Exact: 2, Approximated: 1, Refused: 1, Unchanged: 2, Denied: 1}
	if res.Report.Totals != want {
		t.Errorf("totals %+v, want %+v", res.Report.Totals, want)
	}
	var b strings.Builder
	if err := res.Report.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Ingress default/refused: denied", "configuration-snippet  refused", "limit-rps", "approximated", "Total: 4 Ingresses (2 move unchanged, 1 denied), 4 annotations: 2 exact, 1 approximated, 1 refused"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, b.String())
		}
	}
}

package ingressnginx

import (
	"strings"
	"testing"

	netv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSelection(t *testing.T) {
	byClass := ing("by-class", "a.test", "/", "app")
	delete(byClass.Annotations, AnnotationIngressClass)
	cls := "nginx-public"
	byClass.Spec.IngressClassName = &cls
	other := ing("other", "b.test", "/", "app")
	other.Annotations[AnnotationIngressClass] = "traefik"
	none := ing("none", "c.test", "/", "app")
	delete(none.Annotations, AnnotationIngressClass)
	classes := []*netv1.IngressClass{{ObjectMeta: metav1.ObjectMeta{Name: "nginx-public"}, Spec: netv1.IngressClassSpec{Controller: DefaultControllerClass}}}
	for _, c := range []struct {
		in   *netv1.Ingress
		o    Options
		want bool
	}{
		{byClass, Options{}, true},
		{ing("annotated", "d.test", "/", "app"), Options{}, true},
		{other, Options{}, false},
		{none, Options{}, false},
		{none, Options{WatchIngressWithoutClass: true}, true},
		{byClass, Options{ControllerClass: "example.com/other"}, false},
		{byClass, Options{ControllerClass: "example.com/other", IngressClassByName: true, IngressClass: "nginx-public"}, true},
	} {
		if got := Selected(c.in, classes, c.o); got != c.want {
			t.Errorf("%s with %+v: selected %v, want %v", c.in.Name, c.o, got, c.want)
		}
	}
	res := Translate([]*netv1.Ingress{byClass, other, none}, classes, newCluster(), Options{})
	if len(res.Report.Ingresses) != 1 || res.Report.Ingresses[0].Name != "by-class" {
		t.Fatalf("report lists %+v, want only by-class", res.Report.Ingresses)
	}
}

// ingress-nginx path types: Prefix is element-wise (= /foo and /foo/),
// ImplementationSpecific a plain prefix, Exact exact; longer paths and
// exact paths win.
func TestPathTypes(t *testing.T) {
	res := translate(t, nil, Options{},
		ing("prefix", "a.test", "/foo", "app"),
		pathType(ing("impl", "b.test", "/foo", "app"), netv1.PathTypeImplementationSpecific),
		pathType(ing("exact", "a.test", "/foo/bar", "other"), netv1.PathTypeExact),
		ing("longer", "a.test", "/foo/bar/", "canary"),
	)
	for _, c := range []struct{ url, want string }{
		{"http://a.test/foo", "default-prefix-rule-0-path-0"},
		{"http://a.test/foo/x", "default-prefix-rule-0-path-0"},
		{"http://a.test/foobar", ""},
		{"http://a.test/foo/bar", "default-exact-rule-0-path-0"},
		{"http://a.test/foo/bar/x", "default-longer-rule-0-path-0"},
		{"http://b.test/foobar", "default-impl-rule-0-path-0"},
		{"http://c.test/foo", ""},
	} {
		if got := routeOf(t, res.Config, "web", "GET", c.url); got != c.want {
			t.Errorf("%s: router %q, want %q", c.url, got, c.want)
		}
	}
	if got := routeOf(t, res.Config, "websecure", "GET", "https://a.test/foo"); got != "default-prefix-rule-0-path-0-tls" {
		t.Errorf("TLS entrypoint: router %q", got)
	}
}

// use-regex on one Ingress makes every path of its host a case-insensitive
// regular expression, also another Ingress's (ingress-nginx).
func TestUseRegex(t *testing.T) {
	res := translate(t, nil, Options{},
		ing("regex", "a.test", "/api/v[0-9]+", "app", "use-regex", "true"),
		ing("plain", "a.test", "/docs.", "other"),
		ing("elsewhere", "b.test", "/docs.", "other"),
	)
	for _, c := range []struct{ url, want string }{
		{"http://a.test/api/v12/x", "default-regex-rule-0-path-0"},
		{"http://a.test/API/V1", "default-regex-rule-0-path-0"},
		{"http://a.test/api/vx", ""},
		{"http://a.test/docsX", "default-plain-rule-0-path-0"},
		{"http://b.test/docsX", ""},
	} {
		if got := routeOf(t, res.Config, "web", "GET", c.url); got != c.want {
			t.Errorf("%s: router %q, want %q", c.url, got, c.want)
		}
	}
	if v := verdict(t, res, "regex", "use-regex"); v.Support != Exact {
		t.Errorf("verdict %+v", v)
	}
	// A PCRE-only construct is refused with a problem naming the Ingress.
	res = translate(t, nil, Options{}, ing("lookahead", "a.test", "/(?!admin)", "app", "use-regex", "true"))
	p := problemWith(t, res, "ingress default/lookahead", "not a Go (RE2) regular expression")
	if p.Severity != "error" {
		t.Errorf("severity %s", p.Severity)
	}
	if _, ok := res.Config.HTTP.Routers["default-lookahead-rule-0-path-0"]; ok {
		t.Error("router built for a refused path")
	}
}

func TestRewriteTarget(t *testing.T) {
	res := translate(t, nil, Options{},
		pathType(ing("capture", "a.test", "/something(/|$)(.*)", "app", "rewrite-target", "/$2"), netv1.PathTypeImplementationSpecific),
		ing("root", "b.test", "/api", "app", "rewrite-target", "/"),
		ing("suffix", "c.test", "/v1/(.*)", "app", "rewrite-target", "/api/$1x"),
	)
	m := mw(t, res, "default-capture-rule-0-path-0", "-rewrite-target")
	for in, want := range map[string]string{"/something": "/", "/something/": "/", "/something/new": "/new", "/SomeThing/a/b": "/a/b"} {
		if got := rewrite(t, m, in); got != want {
			t.Errorf("capture: %s rewritten to %s, want %s", in, got, want)
		}
	}
	// nginx replaces the whole URI: without captures everything becomes the target.
	if got := rewrite(t, mw(t, res, "default-root-rule-0-path-0", "-rewrite-target"), "/api/users/1"); got != "/" {
		t.Errorf("root: rewritten to %s, want /", got)
	}
	// $1 followed by letters is still the group ($1x in Go would be ${1x}).
	if got := rewrite(t, mw(t, res, "default-suffix-rule-0-path-0", "-rewrite-target"), "/v1/users"); got != "/api/usersx" {
		t.Errorf("suffix: rewritten to %s", got)
	}
	// rewrite-target makes the host's paths regular expressions.
	if got := routeOf(t, res.Config, "web", "GET", "http://a.test/something/new"); got != "default-capture-rule-0-path-0" {
		t.Errorf("route %q", got)
	}
	// An nginx variable is refused, naming the Ingress and annotation.
	res = translate(t, nil, Options{}, ing("var", "a.test", "/x", "app", "rewrite-target", "/$host/y"))
	problemWith(t, res, "ingress default/var annotation nginx.ingress.kubernetes.io/rewrite-target", "nginx variable $host")
	if v := verdict(t, res, "var", "rewrite-target"); v.Support != Refused {
		t.Errorf("verdict %+v", v)
	}
	if mw(t, res, "default-var-rule-0-path-0", "-rewrite-target") != nil {
		t.Error("refused rewrite-target still applied")
	}
}

func TestSSLRedirect(t *testing.T) {
	res := translate(t, nil, Options{},
		withTLS(ing("tls", "a.test", "/", "app"), "", "a.test"),
		withTLS(ing("off", "b.test", "/", "app", "ssl-redirect", "false"), "", "b.test"),
		ing("plain", "c.test", "/", "app", "ssl-redirect", "true"),
		ing("force", "d.test", "/", "app", "force-ssl-redirect", "true"),
		// TLS declared by another Ingress of the host counts (ingress-nginx: per server).
		ing("shared", "a.test", "/other", "app"),
	)
	for name, want := range map[string]bool{"tls": true, "off": false, "plain": false, "force": true, "shared": true} {
		r := "default-" + name + "-rule-0-path-0"
		m := mw(t, res, r, "-redirect-scheme")
		if got := m != nil; got != want {
			t.Errorf("%s: redirect %v, want %v", name, got, want)
			continue
		}
		if m != nil && (m.RedirectScheme.Scheme != "https" || !m.RedirectScheme.Permanent) {
			t.Errorf("%s: %+v", name, m.RedirectScheme)
		}
		if mw(t, res, r+"-tls", "-redirect-scheme") != nil {
			t.Errorf("%s: the TLS router redirects", name)
		}
	}
	if v := verdict(t, res, "plain", "ssl-redirect"); !strings.Contains(v.Detail, "no TLS section") {
		t.Errorf("verdict %+v", v)
	}
}

func TestServerAlias(t *testing.T) {
	res := translate(t, nil, Options{},
		ing("main", "a.test", "/", "app", "server-alias", "www.a.test, b.test"),
		ing("b", "b.test", "/", "other"),
	)
	for url, want := range map[string]string{
		"http://www.a.test/": "default-main-rule-0-path-0",
		"http://a.test/":     "default-main-rule-0-path-0",
		// b.test is another rule's host: the alias is ignored.
		"http://b.test/": "default-b-rule-0-path-0",
	} {
		if got := routeOf(t, res.Config, "web", "GET", url); got != want {
			t.Errorf("%s: %q, want %q", url, got, want)
		}
	}
	res = translate(t, nil, Options{}, ing("bad", "a.test", "/", "app", "server-alias", "a..b"))
	problemWith(t, res, "default/bad", "server-alias", "not a host name")
}

// The oldest Ingress keeps a host and path; the newer one gets a problem.
func TestDuplicatePath(t *testing.T) {
	older := ing("older", "a.test", "/", "app")
	newer := ing("newer", "a.test", "/", "other")
	newer.CreationTimestamp = metav1.NewTime(created.Add(1))
	res := translate(t, nil, Options{}, newer, older)
	if got := routeOf(t, res.Config, "web", "GET", "http://a.test/"); got != "default-older-rule-0-path-0" {
		t.Errorf("router %q", got)
	}
	problemWith(t, res, "default/newer", "already served by Ingress default/older")
}

package router

import (
	"net/http"
	"strings"
	"testing"
)

// TestMatchers is the rule → request → match table for every matcher and
// operator, in v3 and v2 syntax.
func TestMatchers(t *testing.T) {
	tests := []struct {
		name   string
		syntax string
		rule   string
		r      *http.Request
		want   bool
	}{
		// Host
		{"host exact", "", "Host(`a.example`)", req("GET", "http://a.example/"), true},
		{"host other", "", "Host(`a.example`)", req("GET", "http://b.example/"), false},
		{"host case-insensitive request", "", "Host(`a.example`)", req("GET", "http://A.EXAMPLE/"), true},
		{"host case-insensitive rule", "", "Host(`A.Example`)", req("GET", "http://a.example/"), true},
		{"host port ignored", "", "Host(`a.example`)", req("GET", "http://a.example:8080/"), true},
		{"host trailing dot in request", "", "Host(`a.example`)", req("GET", "http://a.example./"), true},
		{"host trailing dot in rule", "", "Host(`a.example.`)", req("GET", "http://a.example/"), true},
		{"host ipv6 with port", "", "Host(`::1`)", req("GET", "http://[::1]:80/"), true},
		{"host suffix is not a match", "", "Host(`example`)", req("GET", "http://a.example/"), false},
		{"wildcard one label", "", "Host(`*.example.com`)", req("GET", "http://a.example.com/"), true},
		{"wildcard two labels", "", "Host(`*.example.com`)", req("GET", "http://a.b.example.com/"), false},
		{"wildcard apex", "", "Host(`*.example.com`)", req("GET", "http://example.com/"), false},
		{"wildcard case and port", "", "Host(`*.Example.com`)", req("GET", "http://WWW.example.COM:443/"), true},
		{"host star matches all", "", "Host(`*`)", req("GET", "http://anything.test/"), true},
		{"host star matches empty host", "", "Host(`*`)", hostless(), true},
		{"host does not match empty host", "", "Host(`a.example`)", hostless(), false},
		// HostRegexp (case 003)
		{"hostregexp unanchored", "", "HostRegexp(`app1\\..*\\.example\\.com`)", req("GET", "http://xapp1.a.example.com.evil.example/"), true},
		{"hostregexp anchored", "", "HostRegexp(`^app1\\..*\\.example\\.com$`)", req("GET", "http://xapp1.a.example.com.evil.example/"), false},
		{"hostregexp unescaped dots", "", "HostRegexp(`app1..*.example.com`)", req("GET", "http://app1Zq.exampleXcom/"), true},
		{"hostregexp sees lower-case host", "", "HostRegexp(`^[A-Z]+\\.example\\.com$`)", req("GET", "http://ABC.example.com/"), false},
		{"hostregexp without port", "", "HostRegexp(`^a\\.example$`)", req("GET", "http://a.example:81/"), true},
		{"hostregexp v2 placeholder is literal in v3", "", "HostRegexp(`{host:.+}`)", req("GET", "http://whoami.example.com/"), false},
		{"hostregexp catch-all v3", "", "HostRegexp(`.+`)", req("GET", "http://whoami.example.com/"), true},
		// Path, PathPrefix, PathRegexp
		{"path exact", "", "Path(`/a/b`)", req("GET", "http://h/a/b"), true},
		{"path longer", "", "Path(`/a/b`)", req("GET", "http://h/a/b/"), false},
		{"path decodes unreserved", "", "Path(`/foo bar`)", req("GET", "http://h/foo%20bar"), true},
		{"path keeps %2F encoded", "", "Path(`/a/b`)", req("GET", "http://h/a%2Fb"), false},
		{"path matches kept %2F", "", "Path(`/a%2Fb`)", req("GET", "http://h/a%2Fb"), true},
		{"path keeps %25 encoded", "", "Path(`/100%25`)", req("GET", "http://h/100%25"), true},
		{"path keeps %3F encoded", "", "Path(`/a?b`)", req("GET", "http://h/a%3Fb"), false},
		{"path ignores query", "", "Path(`/a`)", req("GET", "http://h/a?x=1"), true},
		{"prefix plain string", "", "PathPrefix(`/products`)", req("GET", "http://h/products-for-sale"), true},
		{"prefix no match", "", "PathPrefix(`/api`)", req("GET", "http://h/ap"), false},
		{"prefix root", "", "PathPrefix(`/`)", req("GET", "http://h/anything"), true},
		{"pathregexp unanchored", "", "PathRegexp(`[0-9]+`)", req("GET", "http://h/users/42/x"), true},
		{"pathregexp anchored", "", "PathRegexp(`^/route/[^/]+$`)", req("GET", "http://h/route/10"), true},
		{"pathregexp anchored no match", "", "PathRegexp(`^/route/[^/]+$`)", req("GET", "http://h/route/10/x"), false},
		// Method
		{"method", "", "Method(`GET`)", req("GET", "http://h/"), true},
		{"method lower in rule", "", "Method(`post`)", req("POST", "http://h/"), true},
		{"method other", "", "Method(`GET`)", req("POST", "http://h/"), false},
		// Header, HeaderRegexp
		{"header", "", "Header(`X-Env`, `prod`)", req("GET", "http://h/", "X-Env: prod"), true},
		{"header key case", "", "Header(`x-env`, `prod`)", req("GET", "http://h/", "X-Env: prod"), true},
		{"header value case-sensitive", "", "Header(`X-Env`, `prod`)", req("GET", "http://h/", "X-Env: PROD"), false},
		{"header second value", "", "Header(`X-Env`, `prod`)", req("GET", "http://h/", "X-Env: dev", "X-Env: prod"), true},
		{"header missing", "", "Header(`X-Env`, `prod`)", req("GET", "http://h/"), false},
		{"header host never matches (Traefik)", "", "Header(`Host`, `h`)", req("GET", "http://h/"), false},
		{"headerregexp", "", "HeaderRegexp(`X-Client-Net`, `192\\.0\\.2\\..*`)", req("GET", "http://h/", "X-Client-Net: 192.0.2.7"), true},
		{"headerregexp dot is literal", "", "HeaderRegexp(`X-Client-Net`, `192\\.0\\.2\\..*`)", req("GET", "http://h/", "X-Client-Net: 192x0x2x7"), false},
		// Query, QueryRegexp
		{"query", "", "Query(`k`, `v`)", req("GET", "http://h/?a=1&k=v"), true},
		{"query other value", "", "Query(`k`, `v`)", req("GET", "http://h/?k=w"), false},
		{"query repeated key", "", "Query(`k`, `v`)", req("GET", "http://h/?k=w&k=v"), true},
		{"query decoded", "", "Query(`a b`, `c+d&`)", req("GET", "http://h/?a+b=c%2Bd%26"), true},
		{"query one arg empty value", "", "Query(`k`)", req("GET", "http://h/?k"), true},
		{"query one arg empty value with =", "", "Query(`k`)", req("GET", "http://h/?k="), true},
		{"query one arg with value", "", "Query(`k`)", req("GET", "http://h/?k=v"), false},
		{"query semicolon pair skipped", "", "Query(`k`, `v`)", req("GET", "http://h/?k=v;x=1"), false},
		{"query bad escape skipped", "", "Query(`k`, `v`)", req("GET", "http://h/?k=v%zz&k=v%"), false},
		{"queryregexp", "", "QueryRegexp(`id`, `^[0-9]+$`)", req("GET", "http://h/?id=123"), true},
		{"queryregexp no match", "", "QueryRegexp(`id`, `^[0-9]+$`)", req("GET", "http://h/?id=12a"), false},
		{"queryregexp decoded value", "", "QueryRegexp(`q`, `^a b$`)", req("GET", "http://h/?q=a%20b"), true},
		{"queryregexp one arg", "", "QueryRegexp(`k`)", req("GET", "http://h/?k"), true},
		// ClientIP
		{"clientip address", "", "ClientIP(`192.0.2.7`)", peer("192.0.2.7:5555"), true},
		{"clientip cidr", "", "ClientIP(`192.0.2.0/24`)", peer("192.0.2.200:1"), true},
		{"clientip outside", "", "ClientIP(`192.0.2.0/24`)", peer("198.51.100.1:1"), false},
		{"clientip ipv6 cidr", "", "ClientIP(`2001:db8::/32`)", peer("[2001:db8::1]:443"), true},
		{"clientip mapped v4", "", "ClientIP(`10.0.0.1`)", peer("[::ffff:10.0.0.1]:1"), true},
		{"clientip ignores x-forwarded-for", "", "ClientIP(`10.0.0.1`)", peer("192.0.2.1:1", "X-Forwarded-For: 10.0.0.1"), false},
		// Operators and spellings
		{"and", "", "Host(`h`) && Path(`/a`)", req("GET", "http://h/a"), true},
		{"and false", "", "Host(`h`) && Path(`/a`)", req("GET", "http://h/b"), false},
		{"or", "", "Path(`/a`) || Path(`/b`)", req("GET", "http://h/b"), true},
		{"not", "", "!Path(`/a`)", req("GET", "http://h/b"), true},
		{"not false", "", "!Path(`/a`)", req("GET", "http://h/a"), false},
		{"precedence", "", "Path(`/x`) || Host(`h`) && Method(`POST`)", req("GET", "http://h/"), false},
		{"parens", "", "(Path(`/x`) || Host(`h`)) && Method(`GET`)", req("GET", "http://h/"), true},
		{"lower-case matcher", "", "host(`h`) && pathprefix(`/`)", req("GET", "http://h/"), true},
		{"upper-case matcher", "", "HOSTREGEXP(`^h$`)", req("GET", "http://h/"), true},
		{"capitalised matcher", "", "Hostregexp(`^h$`)", req("GET", "http://h/"), true},
		{"double-quoted go string", "", `HeaderRegexp("X-Client-Net", "192\\.0\\.2\\..*")`, req("GET", "http://h/", "X-Client-Net: 192.0.2.7"), true},
		// v2 syntax
		{"v2 host several", "v2", "Host(`a.example`, `b.example`)", req("GET", "http://b.example/"), true},
		{"v2 host several other", "v2", "Host(`a.example`, `b.example`)", req("GET", "http://c.example/"), false},
		{"v2 hostheader", "v2", "HostHeader(`a.example`)", req("GET", "http://a.example/"), true},
		{"v2 hostregexp placeholder", "v2", "HostRegexp(`{sub:[a-z]+}.example.com`)", req("GET", "http://abc.example.com/"), true},
		{"v2 hostregexp anchored", "v2", "HostRegexp(`{sub:[a-z]+}.example.com`)", req("GET", "http://abc.example.com.evil/"), false},
		{"v2 hostregexp catch-all", "v2", "HostRegexp(`{host:.+}`)", req("GET", "http://whoami.example.com/"), true},
		{"v2 hostregexp default placeholder one label", "v2", "HostRegexp(`{sub}.example.com`)", req("GET", "http://a.b.example.com/"), false},
		{"v2 hostregexp literal", "v2", "HostRegexp(`A.example.com`)", req("GET", "http://a.example.com/"), true},
		{"v2 path template", "v2", "Path(`/route/{id}`)", req("GET", "http://h/route/10"), true},
		{"v2 path template one segment", "v2", "Path(`/route/{id}`)", req("GET", "http://h/route/10/x"), false},
		{"v2 path template regexp", "v2", "Path(`/users/{id:[0-9]+}`)", req("GET", "http://h/users/x"), false},
		{"v2 pathprefix several", "v2", "PathPrefix(`/a`, `/b`)", req("GET", "http://h/b/c"), true},
		{"v2 pathprefix template", "v2", "PathPrefix(`/v{n:[0-9]}/`)", req("GET", "http://h/v2/x"), true},
		{"v2 method several", "v2", "Method(`GET`, `POST`)", req("POST", "http://h/"), true},
		{"v2 headers", "v2", "Headers(`X-Env`, `prod`)", req("GET", "http://h/", "X-Env: prod"), true},
		{"v2 headersregexp", "v2", "HeadersRegexp(`X-Env`, `^pr`)", req("GET", "http://h/", "X-Env: prod"), true},
		{"v2 query pairs all", "v2", "Query(`a=1`, `b=2`)", req("GET", "http://h/?b=2&a=1"), true},
		{"v2 query pairs one missing", "v2", "Query(`a=1`, `b=2`)", req("GET", "http://h/?a=1"), false},
		{"v2 query key only", "v2", "Query(`a`)", req("GET", "http://h/?a=anything"), true},
		{"v2 query template", "v2", "Query(`id={id:[0-9]+}`)", req("GET", "http://h/?id=42"), true},
		{"v2 clientip several", "v2", "ClientIP(`10.0.0.0/8`, `192.0.2.1`)", peer("192.0.2.1:9"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := compileRule(tt.rule, tt.syntax)
			if err != nil {
				t.Fatalf("compile %s: %v", tt.rule, err)
			}
			in := newInput(tt.r)
			if got := c.root.match(&in); got != tt.want {
				t.Errorf("%s on %s %s%s: got %v, want %v", tt.rule, tt.r.Host, tt.r.URL.RequestURI(), tt.r.Header, got, tt.want)
			}
			if ok, why := c.root.explain(&in); ok != tt.want || why == "" {
				t.Errorf("explain = %v %q, want %v with a reason", ok, why, tt.want)
			}
		})
	}
}

func hostless() *http.Request {
	r := req("GET", "http://h/")
	r.Host = ""
	return r
}

func peer(addr string, headers ...string) *http.Request {
	r := req("GET", "http://h/", headers...)
	r.RemoteAddr = addr
	return r
}

func TestCompileRuleErrors(t *testing.T) {
	tests := []struct {
		name, syntax, rule, want string
	}{
		{"host two args (case 001)", "", "Host(`example.com`, `www.example.com`)", "offset 0: Host: expected 1 argument, got 2"},
		{"pathprefix two args", "", "PathPrefix(`/a`, `/b`)", "PathPrefix: expected 1 argument, got 2"},
		{"method two args", "", "Method(`GET`, `POST`)", "Method: expected 1 argument, got 2"},
		{"header one arg", "", "Header(`k`)", "Header: expected 2 arguments, got 1"},
		{"query three args", "", "Query(`a`, `b`, `c`)", "Query: expected 1 or 2 arguments, got 3"},
		{"no args (case 004 d after shell)", "", "PathPrefix()", "PathPrefix: expected 1 argument, got 0"},
		{"offset of later matcher", "", "Host(`a`) && Path(`x`)", "offset 13: Path: path \"x\" must start with /"},
		{"unknown matcher", "", "Foo(`a`)", "unknown matcher Foo"},
		{"mixed case spelling", "", "hostRegexp(`a`)", "unknown matcher hostRegexp"},
		{"v2 name in v3", "", "Headers(`a`, `b`)", "Headers is v2 syntax; use Header"},
		{"v3 name in v2", "v2", "PathRegexp(`a`)", "unknown matcher PathRegexp in v2 syntax"},
		{"bad regexp", "", "PathRegexp(`(`)", "PathRegexp: error parsing regexp"},
		{"bad client ip", "", "ClientIP(`10.0.0.300`)", "ClientIP: \"10.0.0.300\" is not an IP address or CIDR"},
		{"non-ascii host", "", "Host(`bücher.example`)", "non-ASCII host"},
		{"empty host", "", "Host(``)", "Host: empty host"},
		{"v2 unbalanced template", "v2", "Path(`/a/{id`)", "unbalanced braces"},
		{"v2 headers one arg", "v2", "Headers(`a`)", "Headers: expected 2 arguments, got 1"},
		{"v2 host no args", "v2", "Host()", "Host: expected at least 1 argument, got 0"},
		{"bare word (case 004 e)", "", "Host(h.example.com)", "argument 1 must be quoted"},
		{"bad escape (case 004 c)", "", `Host("h.example.com") && HeaderRegexp("X-Client-Net", "192\.0\.2\..*")`, "bad escape sequence"},
		{"single quotes (case 004 d)", "", "'PathPrefix()'", "single quotes are not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := compileRule(tt.rule, tt.syntax)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("compile %s: got error %v, want one containing %q", tt.rule, err, tt.want)
			}
		})
	}
}

func TestRoutingPath(t *testing.T) {
	tests := []struct{ target, want string }{
		{"/plain/path", "/plain/path"},
		{"/a%2Fb", "/a%2Fb"},
		{"/a%2fb", "/a%2fb"},
		{"/%7Bid%7D", "/{id}"},
		{"/caf%C3%A9", "/café"},
		{"/a%3f", "/a%3f"},
		{"/%41%3A%40%5B%5D%21%23%24%26%27%28%29%2A%2B%2C%3B%3D%25", "/A%3A%40%5B%5D%21%23%24%26%27%28%29%2A%2B%2C%3B%3D%25"},
		{"/%22%2D%2E%5F%7E%3C%3E%5C%5E%60%7C", "/\"-._~<>\\^`|"},
	}
	for _, tt := range tests {
		r := req("GET", "http://h"+tt.target)
		if got := routingPath(r); got != tt.want {
			t.Errorf("routingPath(%s) = %q, want %q", tt.target, got, tt.want)
		}
	}
}

func TestCompileRuleWarnings(t *testing.T) {
	tests := []struct{ rule, want string }{
		{"Header(`host`, `a`)", "Header(`host`, `a`) never matches"},
		{"Path(`/route/{id}`)", "braces are literal in v3 syntax"},
		{"PathPrefix(`/{v}/`)", "braces are literal in v3 syntax"},
		{"HostRegexp(`{host:.+}`)", "{name:re} placeholders are v2 syntax"},
		{"Host(`a`) && PathPrefix(`/api`)", ""},
	}
	for _, tt := range tests {
		c, err := compileRule(tt.rule, "")
		if err != nil {
			t.Fatalf("%s: %v", tt.rule, err)
		}
		got := strings.Join(c.warnings, "; ")
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: warnings %q, want %q", tt.rule, got, tt.want)
		}
	}
}

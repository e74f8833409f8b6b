package ingressnginx

import (
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// TestAnnotations serves one Ingress per annotation through the binary
// and checks what a client gets, as ingress-nginx documents it.
func TestAnnotations(t *testing.T) {
	c := startCluster(t, "    globalAllowedResponseHeaders: [X-Team]\n")
	k := c.k

	t.Run("rewrite-target with capture groups", func(t *testing.T) {
		ns := k.Namespace(t, "rewrite")
		c.backend(t, ns, "app", []int{1})
		c.ingress(t, ns, "rw", "rewrite.test", "/something(/|$)(.*)", "ImplementationSpecific", "app", "", "rewrite-target", "/$2", "use-regex", "true")
		harness.TryGet(t, routeTimeout, c.web(t, "/something/new?x=1"), harness.Host("rewrite.test"), harness.StatusIs(200), harness.BodyContains("GET /new?x=1 "))
		harness.TryGet(t, routeTimeout, c.web(t, "/SOMETHING"), harness.Host("rewrite.test"), harness.StatusIs(200), harness.BodyContains("GET / "))
	})

	t.Run("use-regex", func(t *testing.T) {
		ns := k.Namespace(t, "regex")
		c.backend(t, ns, "app", []int{1})
		c.ingress(t, ns, "re", "regex.test", "/v[0-9]+/items", "ImplementationSpecific", "app", "", "use-regex", "true")
		harness.TryGet(t, routeTimeout, c.web(t, "/V12/items/3"), harness.Host("regex.test"), harness.StatusIs(200), harness.BodyContains("GET /V12/items/3 "))
		harness.TryGet(t, routeTimeout, c.web(t, "/vx/items"), harness.Host("regex.test"), harness.StatusIs(404))
	})

	t.Run("ssl-redirect and force-ssl-redirect", func(t *testing.T) {
		ns := k.Namespace(t, "ssl")
		c.backend(t, ns, "app", []int{1})
		cert, key := k.TestCert(t, "tls.test")
		k.WriteTLSSecret(t, ns, "tls-cert", cert, key)
		c.ingress(t, ns, "tls", "tls.test", "/", "Prefix", "app", "tls-cert")
		c.ingress(t, ns, "off", "off.test", "/", "Prefix", "app", "tls-cert", "ssl-redirect", "false")
		c.ingress(t, ns, "force", "force.test", "/", "Prefix", "app", "", "force-ssl-redirect", "true")
		c.ingress(t, ns, "plain", "plain.test", "/", "Prefix", "app", "")
		r := harness.TryGet(t, routeTimeout, c.web(t, "/a?b=1"), harness.Host("tls.test"), harness.StatusIs(301))
		if loc := r.Header.Get("Location"); loc != "https://tls.test/a?b=1" {
			t.Errorf("Location %q", loc)
		}
		harness.TryGet(t, routeTimeout, c.websecure(t, "/a"), harness.Host("tls.test"), harness.StatusIs(200), harness.BodyContains("GET /a "))
		harness.TryGet(t, routeTimeout, c.web(t, "/a"), harness.Host("off.test"), harness.StatusIs(200))
		harness.TryGet(t, routeTimeout, c.web(t, "/a"), harness.Host("force.test"), harness.StatusIs(301))
		harness.TryGet(t, routeTimeout, c.web(t, "/a"), harness.Host("plain.test"), harness.StatusIs(200))
	})

	t.Run("backend-protocol HTTPS", func(t *testing.T) {
		ns := k.Namespace(t, "https")
		cert, key := k.TestCert(t, "backend.test")
		dir := t.TempDir()
		cf, kf := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
		if err := os.WriteFile(cf, cert, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(kf, key, 0o600); err != nil {
			t.Fatal(err)
		}
		c.backend(t, ns, "secure", []int{2}, "--cert", cf, "--key", kf)
		c.ingress(t, ns, "bp", "https-backend.test", "/", "Prefix", "secure", "", "backend-protocol", "HTTPS")
		harness.TryGet(t, routeTimeout, c.web(t, "/x"), harness.Host("https-backend.test"), harness.StatusIs(200), harness.BodyContains("GET /x HTTP/"))
	})

	t.Run("canary by header, cookie and weight", func(t *testing.T) {
		ns := k.Namespace(t, "canary")
		c.backend(t, ns, "stable", []int{1})
		c.backend(t, ns, "next", []int{2})
		c.ingress(t, ns, "main", "canary.test", "/", "Prefix", "stable", "")
		c.ingress(t, ns, "canary", "canary.test", "/", "Prefix", "next", "", "canary", "true", "canary-by-header", "X-Canary", "canary-by-cookie", "beta")
		harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("canary.test"), harness.Header("X-Canary", "always"), harness.BodyContains("Name: next-0"))
		harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("canary.test"), harness.BodyContains("Name: stable-0"))
		harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("canary.test"), harness.Header("Cookie", "beta=always"), harness.BodyContains("Name: next-0"))
		harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("canary.test"), harness.Header("X-Canary", "never"), harness.Header("Cookie", "beta=always"), harness.BodyContains("Name: stable-0"))
		// canary-by-header-value and -pattern.
		c.ingress(t, ns, "canary", "canary.test", "/", "Prefix", "next", "", "canary", "true", "canary-by-header", "X-Region", "canary-by-header-pattern", "^eu-")
		harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("canary.test"), harness.Header("X-Region", "eu-west"), harness.BodyContains("Name: next-0"))
		harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("canary.test"), harness.Header("X-Region", "us-east"), harness.BodyContains("Name: stable-0"))
		c.ingress(t, ns, "canary", "canary.test", "/", "Prefix", "next", "", "canary", "true", "canary-by-header", "X-Region", "canary-by-header-value", "eu-north")
		harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("canary.test"), harness.Header("X-Region", "eu-north"), harness.BodyContains("Name: next-0"))
		// canary-weight: all of the total goes to the canary, then none.
		c.ingress(t, ns, "canary", "canary.test", "/", "Prefix", "next", "", "canary", "true", "canary-weight", "10", "canary-weight-total", "10")
		harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("canary.test"), harness.BodyContains("Name: next-0"))
		for range 10 {
			harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("canary.test"), harness.StatusIs(200), harness.BodyContains("Name: next-0"))
		}
		c.ingress(t, ns, "canary", "canary.test", "/", "Prefix", "next", "", "canary", "true", "canary-weight", "0")
		harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("canary.test"), harness.BodyContains("Name: stable-0"))
	})

	t.Run("auth-url, auth-signin, auth-response-headers", func(t *testing.T) {
		ns := k.Namespace(t, "extauth")
		c.backend(t, ns, "app", []int{1})
		auth := startAuth(t, harness.PodIP(t, 3))
		c.ingress(t, ns, "ext", "ext.test", "/", "Prefix", "app", "",
			"auth-url", auth+"/verify", "auth-response-headers", "X-User", "auth-signin", "https://login.test/start")
		r := harness.TryGet(t, routeTimeout, c.web(t, "/private?q=1"), harness.Host("ext.test"), harness.StatusIs(302))
		loc, err := url.Parse(r.Header.Get("Location"))
		if err != nil || loc.Host != "login.test" || loc.Query().Get("rd") != "http://ext.test/private?q=1" {
			t.Errorf("sign-in Location %q", r.Header.Get("Location"))
		}
		harness.TryGet(t, routeTimeout, c.web(t, "/private"), harness.Host("ext.test"), harness.Header("Authorization", "Bearer ok"),
			harness.StatusIs(200), harness.BodyContains("X-User: alice"))
	})

	t.Run("auth-type basic with its Secret", func(t *testing.T) {
		ns := k.Namespace(t, "basic")
		c.backend(t, ns, "app", []int{1})
		sum := sha1.Sum([]byte("s3cret"))
		writeSecret(t, c, ns, "users", map[string][]byte{"auth": []byte("alice:{SHA}" + base64.StdEncoding.EncodeToString(sum[:]) + "\n")})
		c.ingress(t, ns, "basic", "basic.test", "/", "Prefix", "app", "", "auth-type", "basic", "auth-secret", "users", "auth-realm", "Staff only")
		r := harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("basic.test"), harness.StatusIs(401))
		if h := r.Header.Get("WWW-Authenticate"); !strings.Contains(h, `realm="Staff only"`) {
			t.Errorf("WWW-Authenticate %q", h)
		}
		req, _ := http.NewRequest("GET", c.web(t, "/"), nil)
		req.Host = "basic.test"
		req.SetBasicAuth("alice", "s3cret")
		harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("basic.test"), harness.Header("Authorization", req.Header.Get("Authorization")), harness.StatusIs(200))
		// auth-map, and a Secret that is missing: its paths answer 503.
		writeSecret(t, c, ns, "map", map[string][]byte{"bob": []byte("{SHA}" + base64.StdEncoding.EncodeToString(sum[:]))})
		c.ingress(t, ns, "basic", "basic.test", "/", "Prefix", "app", "", "auth-type", "basic", "auth-secret", "map", "auth-secret-type", "auth-map")
		harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("basic.test"), harness.Header("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("bob:s3cret"))), harness.StatusIs(200))
		c.ingress(t, ns, "basic", "basic.test", "/", "Prefix", "app", "", "auth-type", "basic", "auth-secret", "nosuch")
		harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("basic.test"), harness.StatusIs(503))
		harness.TryGet(t, routeTimeout, c.api+"/api/problems", harness.BodyContains("ingress "+ns+"/basic annotation nginx.ingress.kubernetes.io/auth-secret"))
	})

	t.Run("whitelist-source-range", func(t *testing.T) {
		ns := k.Namespace(t, "allow")
		c.backend(t, ns, "app", []int{1})
		c.ingress(t, ns, "deny", "deny.test", "/", "Prefix", "app", "", "whitelist-source-range", "10.0.0.0/8")
		c.ingress(t, ns, "allow", "allow.test", "/", "Prefix", "app", "", "whitelist-source-range", "10.0.0.0/8, 127.0.0.1/32")
		harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("deny.test"), harness.StatusIs(403))
		harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("allow.test"), harness.StatusIs(200))
	})

	t.Run("proxy-body-size", func(t *testing.T) {
		ns := k.Namespace(t, "body")
		c.backend(t, ns, "app", []int{1})
		c.ingress(t, ns, "body", "body.test", "/", "Prefix", "app", "", "proxy-body-size", "1k")
		harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("body.test"), harness.StatusIs(200))
		if code := post(t, c.web(t, "/"), "body.test", 2048); code != 413 {
			t.Errorf("2 KiB body: %d, want 413", code)
		}
		if code := post(t, c.web(t, "/"), "body.test", 512); code != 200 {
			t.Errorf("512 B body: %d, want 200", code)
		}
	})

	t.Run("affinity cookie", func(t *testing.T) {
		ns := k.Namespace(t, "sticky")
		c.backend(t, ns, "app", []int{4, 5})
		c.ingress(t, ns, "sticky", "sticky.test", "/shop", "Prefix", "app", "", "affinity", "cookie", "session-cookie-name", "route", "session-cookie-max-age", "600")
		r := harness.TryGet(t, routeTimeout, c.web(t, "/shop/cart"), harness.Host("sticky.test"), harness.StatusIs(200))
		var ck *http.Cookie
		for _, x := range r.Cookies() {
			if x.Name == "route" {
				ck = x
			}
		}
		if ck == nil || ck.Path != "/shop" || !ck.HttpOnly || ck.MaxAge != 600 {
			t.Fatalf("cookie %+v (Set-Cookie %q)", ck, r.Header.Values("Set-Cookie"))
		}
		first := nameIn(r.Body)
		for range 10 {
			r := harness.TryGet(t, routeTimeout, c.web(t, "/shop/cart"), harness.Host("sticky.test"), harness.Header("Cookie", "route="+ck.Value), harness.StatusIs(200))
			if n := nameIn(r.Body); n != first {
				t.Fatalf("sticky request went to %s, first to %s", n, first)
			}
		}
	})

	t.Run("enable-cors", func(t *testing.T) {
		ns := k.Namespace(t, "cors")
		c.backend(t, ns, "app", []int{1})
		c.ingress(t, ns, "cors", "cors.test", "/", "Prefix", "app", "", "enable-cors", "true", "cors-allow-origin", "https://app.test", "cors-allow-methods", "GET, PUT", "cors-max-age", "600")
		r := harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("cors.test"), harness.Method("OPTIONS"), harness.Header("Origin", "https://app.test"),
			harness.Header("Access-Control-Request-Method", "PUT"), harness.StatusIs(200))
		if r.Header.Get("Access-Control-Allow-Origin") != "https://app.test" || r.Header.Get("Access-Control-Max-Age") != "600" ||
			!strings.Contains(r.Header.Get("Access-Control-Allow-Methods"), "PUT") || r.Header.Get("Access-Control-Allow-Credentials") != "true" {
			t.Errorf("preflight headers %v", r.Header)
		}
		r = harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("cors.test"), harness.Header("Origin", "https://app.test"), harness.StatusIs(200))
		if r.Header.Get("Access-Control-Allow-Origin") != "https://app.test" {
			t.Errorf("response headers %v", r.Header)
		}
	})

	t.Run("limit-rps and limit-connections", func(t *testing.T) {
		ns := k.Namespace(t, "limits")
		c.backend(t, ns, "app", []int{1})
		c.ingress(t, ns, "rps", "rps.test", "/", "Prefix", "app", "", "limit-rps", "1", "limit-burst-multiplier", "1")
		harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("rps.test"), harness.StatusIs(200))
		// 20 requests at once over 1 per second with a burst of 1: some
		// must be refused. A round whose requests a stalled machine spread
		// over more than the window is sent again (up to 10 rounds).
		var codes map[int]int
		for range 10 {
			if codes = burst(t, c.web(t, "/"), "rps.test", 20); codes[429] > 0 {
				break
			}
		}
		if codes[429] == 0 {
			t.Errorf("rounds of 20 requests at once over limit-rps 1: %v, want some 429", codes)
		}
		c.ingress(t, ns, "conn", "conn.test", "/", "Prefix", "app", "", "limit-connections", "1")
		harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("conn.test"), harness.StatusIs(200))
		held := make(chan int, 1)
		go func() {
			// The request TryGet just saw answered may still hold its slot
			// for a moment after its response reached the client (the slot
			// is given back when the handler returns): a 429 here is sent
			// again, a bounded number of times; a slot never given back
			// fails the test below.
			code := 0
			for range 50 {
				req, _ := http.NewRequest("GET", c.web(t, "/?wait=20s"), nil)
				req.Host = "conn.test"
				r, err := (&http.Client{Timeout: time.Minute}).Do(req) // harness.Client gives up at 10 s
				if err != nil {
					break
				}
				r.Body.Close()
				if code = r.StatusCode; code != http.StatusTooManyRequests {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			held <- code
		}()
		// While the held request is open (20 s, so that a loaded machine
		// still sees it in flight), a second connection is refused.
		harness.TryGet(t, 60*time.Second, c.web(t, "/"), harness.Host("conn.test"), harness.StatusIs(429))
		if code := <-held; code != 200 {
			t.Errorf("the held request got %d", code)
		}
	})

	t.Run("custom-headers", func(t *testing.T) {
		ns := k.Namespace(t, "headers")
		c.backend(t, ns, "app", []int{1})
		writeConfigMap(t, c, ns, "hdrs", map[string]string{"X-Team": "payments"})
		c.ingress(t, ns, "ch", "headers.test", "/", "Prefix", "app", "", "custom-headers", ns+"/hdrs")
		harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("headers.test"), harness.StatusIs(200), harness.Cond(func(r *harness.Response) error {
			if r.Header.Get("X-Team") != "payments" {
				return fmt.Errorf("X-Team %q", r.Header.Get("X-Team"))
			}
			return nil
		}))
	})

	t.Run("permanent-redirect and app-root", func(t *testing.T) {
		ns := k.Namespace(t, "redirects")
		c.backend(t, ns, "app", []int{1})
		c.ingress(t, ns, "moved", "moved.test", "/", "Prefix", "app", "", "permanent-redirect", "https://new.test/landing")
		c.ingress(t, ns, "root", "root.test", "/", "Prefix", "app", "", "app-root", "/app1")
		r := harness.TryGet(t, routeTimeout, c.web(t, "/old/page"), harness.Host("moved.test"), harness.StatusIs(301))
		if loc := r.Header.Get("Location"); loc != "https://new.test/landing" {
			t.Errorf("permanent-redirect Location %q", loc)
		}
		r = harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("root.test"), harness.StatusIs(302))
		if loc := r.Header.Get("Location"); loc != "http://root.test/app1" {
			t.Errorf("app-root Location %q", loc)
		}
		harness.TryGet(t, routeTimeout, c.web(t, "/app1"), harness.Host("root.test"), harness.StatusIs(200), harness.BodyContains("GET /app1 "))
	})

	t.Run("upstream-vhost and server-alias", func(t *testing.T) {
		ns := k.Namespace(t, "vhost")
		c.backend(t, ns, "app", []int{1})
		c.ingress(t, ns, "vh", "vhost.test", "/", "Prefix", "app", "", "upstream-vhost", "internal.example", "server-alias", "alias.test")
		harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("vhost.test"), harness.StatusIs(200), harness.BodyContains("Host: internal.example"))
		harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("alias.test"), harness.StatusIs(200), harness.BodyContains("Host: internal.example"))
	})

	t.Run("proxy-read-timeout", func(t *testing.T) {
		ns := k.Namespace(t, "timeouts")
		c.backend(t, ns, "app", []int{1})
		c.ingress(t, ns, "slow", "slow.test", "/", "Prefix", "app", "", "proxy-read-timeout", "1", "proxy-connect-timeout", "2", "proxy-send-timeout", "5")
		harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("slow.test"), harness.StatusIs(200))
		harness.TryGet(t, routeTimeout, c.web(t, "/?wait=3s"), harness.Host("slow.test"), harness.StatusIs(504))
	})

	t.Run("snippets refused", func(t *testing.T) {
		ns := k.Namespace(t, "snippet")
		c.backend(t, ns, "app", []int{1})
		c.ingress(t, ns, "snip", "snippet.test", "/", "Prefix", "app", "", "configuration-snippet", "more_set_headers \"X-A: b\";")
		harness.TryGet(t, routeTimeout, c.web(t, "/"), harness.Host("snippet.test"), harness.StatusIs(503))
		harness.TryGet(t, routeTimeout, c.api+"/api/problems", harness.BodyContains("ingress "+ns+"/snip annotation nginx.ingress.kubernetes.io/configuration-snippet"))
	})
}

// startAuth serves an external auth endpoint on ip: 200 with X-User for
// "Authorization: Bearer ok", else 401.
func startAuth(t *testing.T, ip string) string {
	t.Helper()
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer ok" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("X-User", "alice")
		w.WriteHeader(http.StatusOK)
	}), ReadHeaderTimeout: 10 * time.Second}
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Serve(l) })
	t.Cleanup(func() { _ = srv.Close(); wg.Wait() })
	return "http://" + l.Addr().String()
}

func writeSecret(t *testing.T, c *cluster, ns, name string, data map[string][]byte) {
	t.Helper()
	if _, err := c.k.Client.CoreV1().Secrets(ns).Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func writeConfigMap(t *testing.T, c *cluster, ns, name string, data map[string]string) {
	t.Helper()
	if _, err := c.k.Client.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// post sends a body of n bytes and returns the status.
func post(t *testing.T, u, host string, n int) int {
	t.Helper()
	req, err := http.NewRequest("POST", u, strings.NewReader(strings.Repeat("x", n)))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	resp, err := harness.Client.Do(req)
	if err != nil {
		t.Fatalf("POST %d bytes: %v", n, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// burst sends n requests at once and counts the statuses.
func burst(t *testing.T, u, host string, n int) map[int]int {
	t.Helper()
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			r, err := harness.Get(u, harness.Host(host))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				codes[0]++
				return
			}
			codes[r.StatusCode]++
		})
	}
	wg.Wait()
	return codes
}

// nameIn returns whoami's "Name: " line.
func nameIn(body string) string {
	for l := range strings.SplitSeq(body, "\n") {
		if n, ok := strings.CutPrefix(l, "Name: "); ok {
			return n
		}
	}
	return ""
}

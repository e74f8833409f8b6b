package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// rawGet sends "GET target HTTP/1.1" exactly as written (no client-side
// normalisation) to addr and returns the response.
func rawGet(t *testing.T, addr, host, target string) (int, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target, host)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Cases 024 and 025 through the real binary: percent-encoded slashes reach
// the backend as sent (also lower-case %2f, also after StripPrefix), a
// ReplacePathRegex replacement is encoded once, a StripPrefix result that
// would climb above the root is refused with 400, dot-segments (also
// %2e%2e) are resolved before routing, and entryPoints.<ep>.http.
// encodedCharacters (Traefik 3.7) rejects what it denies with 400.
func TestEncodedPaths(t *testing.T) {
	w := harness.StartWhoami(t, "w")
	p := startProxy(t, map[string]string{"web": "", "strict": ""}, "", fmt.Sprintf(`
http:
  routers:
    gl:
      rule: PathPrefix(`+"`/gitlab`"+`)
      middlewares: [strip-gl]
      service: echo
    ent:
      rule: PathPrefix(`+"`/entities`"+`)
      middlewares: [enc]
      service: echo
    public:
      rule: PathPrefix(`+"`/public`"+`)
      middlewares: [strip-public]
      service: echo
    admin:
      rule: PathPrefix(`+"`/admin`"+`) && ClientIP(`+"`192.0.2.0/24`"+`)
      service: echo
  middlewares:
    strip-gl:
      stripPrefix:
        prefixes: ["/gitlab"]
    strip-public:
      stripPrefix:
        prefixes: ["/public"]
    enc:
      replacePathRegex:
        regex: "^/entities/([^/]*)/([^/]*)/(.*)"
        replacement: "/entities/${1}/${2}%%2F${3}"
  services:
    echo:
      loadBalancer:
        servers: [{url: "http://%s"}]
`, w))
	web, strict := p.EntryPoints["web"], p.EntryPoints["strict"]
	for _, tt := range []struct {
		addr, target string
		code         int
		backend      string // request-target the backend received
	}{
		{web, "/gitlab/api/v4/projects/group%2Fproject", 200, "/api/v4/projects/group%2Fproject"},
		{web, "/gitlab/a%2fb", 200, "/a%2fb"},
		{web, "/entities/projects/ns/proj", 200, "/entities/projects/ns%2Fproj"},
		{web, "/public/x", 200, "/x"},
		{web, "/public../x", 400, ""},                // stripped to /../x: never forwarded (case 025)
		{web, "/public/%2e%2e/admin/users", 404, ""}, // resolved to /admin/users: ClientIP refuses
		{web, "/public/../admin/users", 404, ""},
		{web, "/public/%2E%2E%2Fadmin/users", 200, "/..%2Fadmin/users"},
		{web, "/public//x///y", 200, "/x/y"},
		{strict, "/gitlab/a%2Fb", 400, ""},
		{strict, "/gitlab/a%2fb", 400, ""},
		{strict, "/gitlab/a%23b", 400, ""},
		{strict, "/gitlab/a%3Fb", 200, "/a%3Fb"}, // not denied on this entrypoint
		{strict, "/gitlab/plain", 200, "/plain"},
	} {
		code, body := rawGet(t, tt.addr, "paths.test", tt.target)
		if code != tt.code {
			t.Errorf("GET %s on %s: status %d, want %d (%.200q)", tt.target, tt.addr, code, tt.code, body)
			continue
		}
		if tt.backend != "" {
			if got := parseEcho(body).requestLine; got != "GET "+tt.backend+" HTTP/1.1" {
				t.Errorf("GET %s: backend got %q, want %q", tt.target, got, "GET "+tt.backend+" HTTP/1.1")
			}
		}
	}
}

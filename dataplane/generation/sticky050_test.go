package generation_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
)

// Case 050: sticky cookie attributes as Traefik writes them — Path=/ by
// default, Max-Age only when positive (negative: Max-Age=0, expired at
// once), an unknown sameSite gives no SameSite attribute (no error), a
// name outside the cookie token set is sanitized (not dropped), the
// default name is Traefik's; sameSite none without secure is a warning
// naming the service (browsers reject such a cookie).
func TestStickyCookieAttributesCase050(t *testing.T) {
	be := dptest.EchoBackend(t, "a")
	h := newHarness(t, nil, nil)
	defer dptest.CloseIdle()
	tbl := h.Apply(fmt.Sprintf(`
http:
  routers:
    lax@file:   {rule: "Host(`+"`lax`"+`)", service: lax@file}
    bogus@file: {rule: "Host(`+"`bogus`"+`)", service: bogus@file}
    odd@file:   {rule: "Host(`+"`odd`"+`)", service: odd@file}
    dflt@file:  {rule: "Host(`+"`dflt`"+`)", service: dflt@file}
    none@file:  {rule: "Host(`+"`none`"+`)", service: none@file}
  services:
    lax@file:   {loadBalancer: {sticky: {cookie: {name: s, sameSite: LAX, maxAge: -1}}, servers: [{url: %[1]q}]}}
    bogus@file: {loadBalancer: {sticky: {cookie: {name: s, sameSite: bogus, maxAge: 60}}, servers: [{url: %[1]q}]}}
    odd@file:   {loadBalancer: {sticky: {cookie: {name: "my cookie;v"}}, servers: [{url: %[1]q}]}}
    dflt@file:  {loadBalancer: {sticky: {cookie: {}}, servers: [{url: %[1]q}]}}
    none@file:  {loadBalancer: {sticky: {cookie: {name: s, sameSite: none}}, servers: [{url: %[1]q}]}}
`, be.URL), generation.Options{})
	setCookie := func(host string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "http://"+h.Addr("web")+"/", nil)
		req.Host = host
		resp, err := dptest.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.Header.Get("Set-Cookie")
	}
	attrs := func(sc string) map[string]string {
		m := map[string]string{}
		for i, p := range strings.Split(sc, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if i == 0 {
				m["name"] = k
				continue
			}
			m[strings.ToLower(k)] = v
		}
		return m
	}
	if a := attrs(setCookie("lax")); a["name"] != "s" || a["path"] != "/" || a["max-age"] != "0" || a["samesite"] != "Lax" {
		t.Errorf("lax, maxAge -1: %v, want Path=/ Max-Age=0 SameSite=Lax", a)
	}
	if a := attrs(setCookie("bogus")); a["max-age"] != "60" {
		t.Errorf("bogus sameSite: %v, want Max-Age=60", a)
	} else if _, ok := a["samesite"]; ok {
		t.Errorf("bogus sameSite: %v, want no SameSite attribute", a)
	}
	if a := attrs(setCookie("odd")); a["name"] != "my_cookie_v" {
		t.Errorf("name \"my cookie;v\": Set-Cookie %v, want it sanitized to my_cookie_v", a)
	}
	if a := attrs(setCookie("dflt")); a["name"] != traefikCookieName("dflt@file") {
		t.Errorf("default name: %v, want %s", a, traefikCookieName("dflt@file"))
	}
	if a := attrs(setCookie("none")); a["samesite"] != "None" {
		t.Errorf("sameSite none: %v, want the cookie sent with SameSite=None as configured", a)
	}
	st := tbl.Report().Services["none@file"]
	if st == nil || st.Status != "warning" || !strings.Contains(strings.Join(st.Errors, ";"), "sameSite none without secure") {
		t.Errorf("service none@file: %+v, want a warning about sameSite none without secure", st)
	}
}

package instance

import (
	"reflect"
	"testing"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
)

// entryPoints.<ep>.http.tls goes to routers without tls, as in Traefik:
// a router's own tls wins entirely; a router on entrypoints with and
// without tls is split per entrypoint; the input is not modified.
func TestEntryPointTLS(t *testing.T) {
	le := &config.RouterTLSConfig{CertResolver: "le", Domains: []config.Domain{{Main: "example.com"}}}
	e := EntryPointTLS{"websecure": le}
	eps := []router.EntryPoint{{Name: "web"}, {Name: "websecure", AsDefault: true}}
	in := &providers.Merged{Version: "v1", Config: &config.Configuration{HTTP: &config.HTTPConfiguration{Routers: map[string]*config.Router{
		"plain@docker":   {RouterCommon: config.RouterCommon{Rule: "Host(`a`)", EntryPoints: []string{"web"}}},
		"default@docker": {RouterCommon: config.RouterCommon{Rule: "Host(`b`)"}},
		"own@docker":     {RouterCommon: config.RouterCommon{Rule: "Host(`c`)", EntryPoints: []string{"websecure"}}, TLS: &config.RouterTLSConfig{Options: "modern"}},
		"both@docker":    {RouterCommon: config.RouterCommon{Rule: "Host(`d`)", EntryPoints: []string{"web", "websecure"}}},
	}}}, Origins: map[string]string{"router both@docker": "container d label x"}}
	out := e.Apply(in, eps)
	rs := out.Config.HTTP.Routers
	if rs["plain@docker"].TLS != nil {
		t.Errorf("router on web only got tls %+v", rs["plain@docker"].TLS)
	}
	if !reflect.DeepEqual(rs["default@docker"].TLS, le) {
		t.Errorf("router on the default entrypoint: tls %+v, want the entrypoint's", rs["default@docker"].TLS)
	}
	if got := rs["own@docker"].TLS; got.CertResolver != "" || got.Options != "modern" {
		t.Errorf("router with its own tls: %+v, want it unchanged", got)
	}
	if _, ok := rs["both@docker"]; ok {
		t.Errorf("router on web and websecure not split")
	}
	if w, s := rs["web-both@docker"], rs["websecure-both@docker"]; w == nil || s == nil || w.TLS != nil || !reflect.DeepEqual(s.TLS, le) ||
		!reflect.DeepEqual(w.EntryPoints, []string{"web"}) || !reflect.DeepEqual(s.EntryPoints, []string{"websecure"}) {
		t.Errorf("split routers: web %+v, websecure %+v", w, s)
	}
	if out.Origins["router websecure-both@docker"] != "container d label x" {
		t.Errorf("split router origin: %q", out.Origins["router websecure-both@docker"])
	}
	if in.Config.HTTP.Routers["default@docker"].TLS != nil || len(in.Config.HTTP.Routers) != 4 || len(in.Origins) != 1 {
		t.Errorf("input modified")
	}
	if out.Version != "v1" {
		t.Errorf("version %q", out.Version)
	}
	if got := (EntryPointTLS{}).Apply(in, eps); got != in {
		t.Errorf("without entrypoint tls: a copy was made")
	}
}

package consul

import (
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config/label"
)

// Issue 23: a Consul tag over the value limit is a problem naming the
// service instance and the tag, leaving out only its object; tags over
// the total leave out the instance.
func TestTagSizeLimits(t *testing.T) {
	c, cc := loadCatalogCase(t, "testdata/catalog/two-services.json")
	e := cc.Services["app"][0]
	e.Service.Tags = append(e.Service.Tags, "traefik.http.routers.huge.rule=Host(`"+strings.Repeat("h", label.MaxValueBytes)+"`)")
	snap := c.b.build(cc.Services)
	var found bool
	for _, p := range snap.Problems {
		if strings.Contains(p.Source, "app-1") && strings.Contains(p.Source, "tag traefik.http.routers.huge.rule") && strings.Contains(p.Message, "over 1048576") {
			found = true
		}
	}
	if !found {
		t.Fatalf("problems %+v; want one naming instance app-1 and the tag", snap.Problems)
	}
	if snap.Config.HTTP.Routers["huge"] != nil || snap.Config.HTTP.Routers["app"] == nil {
		t.Errorf("routers %v; want app and not huge", snap.Config.HTTP.Routers)
	}

	for i := range 17 {
		e.Service.Tags = append(e.Service.Tags, "traefik.http.middlewares.m"+strings.Repeat("i", i)+".headers.customrequestheaders.x="+strings.Repeat("v", label.MaxValueBytes-100))
	}
	snap = c.b.build(cc.Services)
	if len(snap.Problems) != 1 || !strings.Contains(snap.Problems[0].Source, "app-1") || !strings.Contains(snap.Problems[0].Message, "in all") {
		t.Fatalf("problems %+v; want one refusing instance app-1", snap.Problems)
	}
	if len(snap.Config.HTTP.Routers) != 0 {
		t.Errorf("routers %v from an instance over the total", snap.Config.HTTP.Routers)
	}
}

// Issue 23: a KV value over the value limit is a problem naming the key,
// leaving out its object; keys over the total are refused whole.
func TestKVSizeLimits(t *testing.T) {
	pairs := map[string]string{
		"traefik/http/routers/a/rule":    "Host(`a.test`)",
		"traefik/http/routers/a/service": "s",
		"traefik/http/routers/big/rule":  strings.Repeat("b", label.MaxValueBytes+1),
	}
	cfg, ps := DecodeKV(pairs, "traefik")
	if len(ps) != 1 || ps[0].Source != "consul key traefik/http/routers/big/rule" || !strings.Contains(ps[0].Message, "over 1048576") {
		t.Fatalf("problems %+v; want one naming the key", ps)
	}
	if cfg.HTTP.Routers["a"] == nil || cfg.HTTP.Routers["big"] != nil {
		t.Errorf("routers %v; want a only", cfg.HTTP.Routers)
	}
	delete(pairs, "traefik/http/routers/big/rule")
	for i := range 17 {
		pairs["traefik/http/middlewares/m"+strings.Repeat("i", i)+"/headers/customRequestHeaders/x"] = strings.Repeat("v", label.MaxValueBytes-100)
	}
	cfg, ps = DecodeKV(pairs, "traefik")
	if !tooLarge(ps) || !strings.HasPrefix(ps[0].Source, "consul key traefik/http/middlewares/m") || len(cfg.HTTP.Routers) != 0 {
		t.Fatalf("problems %+v, routers %v; want one problem refusing the tree", ps, cfg.HTTP.Routers)
	}
}

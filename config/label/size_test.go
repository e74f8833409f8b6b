package label

import (
	"errors"
	"strings"
	"testing"
)

// Issue 23: a value over MaxValueBytes leaves out its object, naming the
// key; labels over MaxTotalBytes in all are refused whole.
func TestSizeLimits(t *testing.T) {
	big := strings.Repeat("x", MaxValueBytes+1)
	c, errs := Decode(map[string]string{
		"traefik.http.routers.big.rule":   "Host(`" + big + "`)",
		"traefik.http.routers.small.rule": "Host(`a.test`)",
	}, "traefik")
	if len(errs) != 1 || errs[0].Key != "traefik.http.routers.big.rule" || errs[0].Object != "router big" || !errors.Is(errs[0].Err, ErrTooLarge) {
		t.Fatalf("errors %v; want one on traefik.http.routers.big.rule leaving out router big", errs)
	}
	if _, ok := c.HTTP.Routers["big"]; ok || c.HTTP.Routers["small"] == nil {
		t.Errorf("routers %v; want small only", c.HTTP.Routers)
	}
	if !strings.Contains(errs[0].Err.Error(), "the value is 1048585 bytes, over 1048576") {
		t.Errorf("message %q", errs[0].Err)
	}

	many := map[string]string{"other.label": strings.Repeat("y", MaxTotalBytes)} // not under the prefix: not counted
	half := strings.Repeat("z", MaxValueBytes-100)
	for i := range 17 {
		many["traefik.http.middlewares.m"+strings.Repeat("i", i)+".headers.customrequestheaders.x"] = half
	}
	c, errs = Decode(many, "traefik")
	if len(errs) != 1 || !errors.Is(errs[0].Err, ErrTotalTooLarge) || errs[0].Object != "" || !strings.HasPrefix(errs[0].Key, "traefik.http.middlewares.m") {
		t.Fatalf("errors %v; want one naming a middleware key, the total over MaxTotalBytes", errs)
	}
	if len(c.HTTP.Middlewares) != 0 {
		t.Errorf("middlewares %v decoded from labels over the total", len(c.HTTP.Middlewares))
	}
	delete(many, "traefik.http.middlewares.m.headers.customrequestheaders.x")
	if _, errs = Decode(many, "traefik"); len(errs) != 0 {
		t.Errorf("16 values of 1 MiB - 100: %v", errs)
	}
}

package docker

import (
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config/label"
	"github.com/gantry-proxy/gantry/config/static"
)

// Issue 23: a Docker label over the value limit is a problem naming the
// container and the label, and leaves out only its object; labels over
// the total leave out the container.
func TestLabelSizeLimits(t *testing.T) {
	p, err := New(static.Docker{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := containerInfo{ID: "abc", Name: "web", State: "running",
		Networks: []netInfo{{Name: "bridge", IP: "172.17.0.2"}}, Ports: []portInfo{{Port: 80, Proto: "tcp"}},
		Labels: map[string]string{
			"traefik.http.routers.web.rule":  "Host(`web.test`)",
			"traefik.http.routers.huge.rule": "Host(`" + strings.Repeat("h", label.MaxValueBytes) + "`)",
		}}
	snap := build([]containerInfo{c}, p.base)
	if len(snap.Problems) != 1 || !strings.Contains(snap.Problems[0].Source, "web") ||
		!strings.Contains(snap.Problems[0].Source, "label traefik.http.routers.huge.rule") ||
		!strings.Contains(snap.Problems[0].Message, "over 1048576") || !strings.Contains(snap.Problems[0].Message, "router huge left out") {
		t.Fatalf("problems %+v; want one naming container web and the label", snap.Problems)
	}
	if snap.Config.HTTP.Routers["web"] == nil || snap.Config.HTTP.Routers["huge"] != nil {
		t.Errorf("routers %v; want web only", snap.Config.HTTP.Routers)
	}

	for i := range 17 {
		c.Labels["traefik.http.middlewares.m"+strings.Repeat("i", i)+".headers.customrequestheaders.x"] = strings.Repeat("v", label.MaxValueBytes-100)
	}
	snap = build([]containerInfo{c}, p.base)
	if len(snap.Problems) != 1 || !strings.Contains(snap.Problems[0].Source, "web") || !strings.Contains(snap.Problems[0].Message, "in all") ||
		!strings.Contains(snap.Problems[0].Message, "container left out") {
		t.Fatalf("problems %+v; want one leaving out container web", snap.Problems)
	}
	if len(snap.Config.HTTP.Routers) != 0 {
		t.Errorf("routers %v from a container over the total", snap.Config.HTTP.Routers)
	}
}

package providers

import (
	"slices"
	"testing"

	"github.com/gantry-proxy/gantry/config"
)

// Servers already present (by key) are not repeated, nor are duplicates
// within src; the others keep src's order after dst's.
func TestUnionServers(t *testing.T) {
	dst := []config.TCPServer{{Address: "a:1"}, {Address: "b:1"}}
	src := []config.TCPServer{{Address: "c:1"}, {Address: "a:1", TLS: true}, {Address: "d:1"}, {Address: "c:1"}}
	got := UnionServers(dst, src, func(s config.TCPServer) string { return s.Address })
	want := []config.TCPServer{{Address: "a:1"}, {Address: "b:1"}, {Address: "c:1"}, {Address: "d:1"}}
	if !slices.Equal(got, want) {
		t.Errorf("UnionServers = %v, want %v", got, want)
	}
}

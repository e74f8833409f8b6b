package docker

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
)

// Issue 23: an unreachable Docker endpoint is a problem naming it (a Down
// snapshot: the aggregator keeps the last configuration, state "down"),
// and Run returns the error for the aggregator to retry.
func TestUnreachableEndpointIsDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	p, err := New(static.Docker{Endpoint: "tcp://" + addr}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got []providers.Snapshot
	err = p.Run(ctx, func(s providers.Snapshot) { got = append(got, s) })
	if err == nil {
		t.Fatal("Run returned nil for an unreachable endpoint")
	}
	if len(got) != 1 || got[0].Down == "" || len(got[0].Problems) != 1 ||
		got[0].Problems[0].Source != "docker endpoint tcp://"+addr || !strings.Contains(got[0].Problems[0].Message, "unreachable") {
		t.Fatalf("published %+v; want one Down snapshot naming the endpoint", got)
	}
}

package tcpproxy

import (
	"net/netip"
	"testing"
)

// Counts no generation holds stay while a connection they count is open
// (the next generation gets them back) and are forgotten when the last
// one closes; a released holder's second release changes nothing.
func TestInFlightCountsOutliveTheirHoldersWhileInUse(t *testing.T) {
	var r InFlightCounts
	a, relA := r.Acquire("router\x00mw")
	b, relB := r.Acquire("router\x00mw")
	if a != b {
		t.Fatal("two holders of one key got different counts")
	}
	ip := netip.MustParseAddr("192.0.2.1")
	a.mu.Lock()
	a.n = map[netip.Addr]int64{ip: 1} // one connection open
	a.mu.Unlock()
	relA()
	relA() // once only: b still holds them
	relB()
	if r.Len() != 1 {
		t.Fatalf("counts with an open connection were forgotten (%d kept)", r.Len())
	}
	c, relC := r.Acquire("router\x00mw")
	if c != a {
		t.Fatal("the next generation did not get the counts back")
	}
	relC()
	a.done(ip)
	if r.Len() != 0 {
		t.Fatalf("idle counts no one holds were kept (%d)", r.Len())
	}
	if d, _ := r.Acquire("router\x00mw"); d == a {
		t.Fatal("forgotten counts came back")
	}
}

// A held value is never forgotten by a drop (a connection of it ending);
// an idle one goes at its last release.
func TestSharedDropKeepsHeldValues(t *testing.T) {
	var r InFlightCounts
	a, relA := r.Acquire("k")
	r.drop(a)
	if r.Len() != 1 {
		t.Fatal("a held value was dropped")
	}
	relA()
	if r.Len() != 0 {
		t.Fatal("an idle value was kept after its last release")
	}
}

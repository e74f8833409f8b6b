package dataplane

import "testing"

// The default connection cap is a share of the open-file limit: two
// descriptors per connection, UDP's quarter, the reserve and the
// listeners aside, split among the entrypoints; never above
// defaultMaxConnections, never below 1.
func TestConnCapFor(t *testing.T) {
	for _, c := range []struct {
		nofile       uint64
		n, listeners int
		want         int
	}{
		{0, 3, 2, defaultMaxConnections},       // unknown limit
		{1 << 20, 3, 2, defaultMaxConnections}, // plenty
		{256, 2, 2, (256 - 64 - fdReserve - 4) / 4},
		{1024, 1, 2, (1024 - 256 - fdReserve - 2) / 2},
		{65536, 2, 64, (65536 - 16384 - fdReserve - 128) / 4},
		{32, 8, 4, 1}, // nothing left: still one
	} {
		if got := connCapFor(c.nofile, c.n, c.listeners); got != c.want {
			t.Errorf("connCapFor(%d, %d, %d) = %d, want %d", c.nofile, c.n, c.listeners, got, c.want)
		}
		// The entrypoints at their caps, two descriptors a connection,
		// fit in three quarters of the limit with the reserve left over.
		if got := connCapFor(c.nofile, c.n, c.listeners); c.nofile > 0 && got > 1 &&
			uint64(2*got*c.n+fdReserve+c.n*c.listeners) > c.nofile-c.nofile/4 {
			t.Errorf("connCapFor(%d, %d, %d) = %d: over the limit's share", c.nofile, c.n, c.listeners, got)
		}
	}
}

package observe

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"
)

// TestSecondTextMatchesFormat: the kept second's text plus the fraction
// is what AppendFormat writes, with and without nanoseconds, for times
// mostly in the same few seconds (kept text reused), in zones east, west,
// of odd offsets, fractions with trailing zeros, whole seconds, and years
// of other than four digits.
func TestSecondTextMatchesFormat(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("IST", 5*3600+1800), time.FixedZone("NST", -(3*3600 + 1800)),
		time.FixedZone("odd", 10), time.FixedZone("far", -12*3600), time.FixedZone("UTC", 0)}
	bases := []time.Time{time.Date(2026, 12, 31, 23, 59, 58, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 6, 1, 0, 0, 0, 0, time.UTC), time.Date(12026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := rand.New(rand.NewPCG(27, 1))
	var c secondText
	for range 50000 {
		tm := bases[r.IntN(len(bases))].Add(time.Duration(r.Int64N(int64(3 * time.Second))))
		switch r.IntN(4) {
		case 0:
			tm = tm.Truncate(time.Second)
		case 1:
			tm = tm.Truncate(time.Millisecond)
		case 2:
			tm = tm.Truncate(100 * time.Nanosecond)
		}
		tm = tm.In(zones[r.IntN(len(zones))])
		nanos := r.IntN(2) == 0
		layout := time.RFC3339
		if nanos {
			layout = time.RFC3339Nano
		}
		want := tm.AppendFormat([]byte("x"), layout)
		if got := c.append([]byte("x"), tm, nanos); !bytes.Equal(got, want) {
			t.Fatalf("%v (nanos %v): got %s, want %s", tm, nanos, got, want)
		}
	}
}

package ascii

import (
	"strconv"
	"testing"
)

func TestUnhexAgreesWithStrconv(t *testing.T) {
	for c := range 256 {
		got, ok := Unhex(byte(c))
		want, err := strconv.ParseUint(string(rune(c)), 16, 8)
		if ok != (err == nil) || (ok && uint64(got) != want) {
			t.Errorf("Unhex(%q) = %d, %v; strconv says %d, %v", rune(c), got, ok, want, err)
		}
	}
}

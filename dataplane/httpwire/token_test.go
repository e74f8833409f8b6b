package httpwire

import "testing"

func TestHasToken(t *testing.T) {
	for _, tc := range []struct {
		values []string
		token  string
		want   bool
	}{
		{[]string{"Upgrade"}, "upgrade", true},
		{[]string{"keep-alive, Upgrade"}, "upgrade", true},
		{[]string{"keep-alive", " upgrade "}, "upgrade", true},
		{[]string{"keep-alive,,close"}, "close", true},
		{[]string{"upgrades"}, "upgrade", false},
		{[]string{"x-upgrade, keep-alive"}, "upgrade", false},
		{[]string{""}, "upgrade", false},
		{nil, "upgrade", false},
	} {
		if got := HasToken(tc.values, tc.token); got != tc.want {
			t.Errorf("HasToken(%q, %q) = %v, want %v", tc.values, tc.token, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { HasToken([]string{"a, b, Upgrade"}, "upgrade") }); n != 0 {
		t.Errorf("HasToken allocates %v times", n)
	}
}

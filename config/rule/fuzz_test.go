package rule

import "testing"

// FuzzParse checks that parsing never panics and that the canonical print
// of any accepted expression parses back to an equal tree and prints the
// same again. The seed corpus is in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"Host(`a.example.com`)",
		"Host(`a`) && (PathPrefix(`/x`) || !Method(`GET`))",
		`Header("X", "a\tb\"c")`,
		"Query(`k`,)",
		"!(!(A()))",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		t1, err := Parse(s)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Parse(%q) error %T, want *Error", s, err)
			}
			return
		}
		p1 := t1.String()
		t2, err := Parse(p1)
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its print %q does not parse: %v", s, p1, err)
		}
		if !Equal(t1, t2) {
			t.Fatalf("Parse(%q): print %q parses to a different tree", s, p1)
		}
		if p2 := t2.String(); p2 != p1 {
			t.Fatalf("Parse(%q): print not stable: %q then %q", s, p1, p2)
		}
	})
}

package statusrange

import (
	"errors"
	"strings"
	"testing"
)

func TestParseList(t *testing.T) {
	l, err := ParseList([]string{"404", " 500 - 502 ,599", "100-100"})
	if err != nil {
		t.Fatal(err)
	}
	want := List{{404, 404}, {500, 502}, {599, 599}, {100, 100}}
	if len(l) != len(want) {
		t.Fatalf("got %v, want %v", l, want)
	}
	for i := range want {
		if l[i] != want[i] {
			t.Fatalf("got %v, want %v", l, want)
		}
	}
	for code, in := range map[int]bool{99: false, 100: true, 101: false, 404: true, 499: false, 500: true, 502: true, 503: false, 599: true, 600: false} {
		if l.Contains(code) != in {
			t.Errorf("Contains(%d) = %v, want %v", code, !in, in)
		}
	}
}

func TestParseListErrors(t *testing.T) {
	for _, tc := range []struct {
		list  []string
		index int
		msg   string
	}{
		{[]string{"404", "abc"}, 1, `"abc" is not a status or status range`},
		{[]string{"500-x"}, 0, `"500-x" is not a status or status range`},
		{[]string{"404", "500,99"}, 1, `"99" is not within 100-599`},
		{[]string{"600"}, 0, `"600" is not within 100-599`},
		{[]string{"502-500"}, 0, `"502-500" is not within 100-599 in increasing order`},
		{[]string{""}, 0, `"" is not a status`},
		{[]string{"500,"}, 0, `"" is not a status`},
	} {
		_, err := ParseList(tc.list)
		ee, ok := errors.AsType[*EntryError](err)
		if !ok || ee.Index != tc.index || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("ParseList(%q) = %v; want entry %d: %s", tc.list, err, tc.index, tc.msg)
		}
	}
}

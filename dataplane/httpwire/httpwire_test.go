package httpwire

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestParseChunkLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		size int64
		err  error
	}{
		{"0", 0, nil},
		{"5", 5, nil},
		{"fF", 255, nil},
		{"000000000000005", 5, nil},
		{"fffffffffffffff", 1<<60 - 1, nil},
		{"5;a", 5, nil},
		{"5;a=b", 5, nil},
		{"5;a=b;c;d=e", 5, nil},
		{"5;a=\"x y;z\\\"q\\\\\"", 5, nil},
		{"5;a=\"\t\xff\"", 5, nil},
		{"5;a=\"\\\xff\"", 5, nil},
		// BWS before ";", after it and around "=" (RFC 9112 §7.1.1).
		{"5 ;a", 5, nil},
		{"5\t;a", 5, nil},
		{"5 \t ;a=b", 5, nil},
		{"5; a = b", 5, nil},
		{"5;a=b ; c", 5, nil},

		{"", 0, ErrChunkSize},
		{"x", 0, ErrChunkSize},
		{"0x5", 0, ErrChunkSize},
		{"+5", 0, ErrChunkSize},
		{"-5", 0, ErrChunkSize},
		{" 5", 0, ErrChunkSize},
		{";a", 0, ErrChunkSize},
		{"5g", 0, ErrChunkSize},
		{"0000000000000005", 0, ErrChunkSizeLarge},
		{"1000000000000000", 0, ErrChunkSizeLarge},
		{"5 ", 0, ErrChunkExt},
		{"5\t", 0, ErrChunkExt},
		{"5 5", 0, ErrChunkExt},
		{"5;", 0, ErrChunkExt},
		{"5; ", 0, ErrChunkExt},
		{"5;a ", 0, ErrChunkExt},
		{"5;a=", 0, ErrChunkExt},
		{"5;=b", 0, ErrChunkExt},
		{"5;;a", 0, ErrChunkExt},
		{"5;a b", 0, ErrChunkExt},
		{"5;a=b c", 0, ErrChunkExt},
		{"5;a=\"b", 0, ErrChunkExt},
		{"5;a=\"b\\\"", 0, ErrChunkExt},
		{"5;a=\"b\"c", 0, ErrChunkExt},
		{"5;a\rb", 0, ErrChunkExt},
		{"5;a=\"\r\"", 0, ErrChunkExt},
		{"5;a=\"\x00\"", 0, ErrChunkExt},
		{"5;a=\"\\\x7f\"", 0, ErrChunkExt},
		{"5;a\x00", 0, ErrChunkExt},
		{"5;a/b", 0, ErrChunkExt},
	} {
		n, err := ParseChunkLine([]byte(tc.line))
		if !errors.Is(err, tc.err) || err == nil && n != tc.size {
			t.Errorf("ParseChunkLine(%q) = %d, %v; want %d, %v", tc.line, n, err, tc.size, tc.err)
		}
	}
}

func TestParseField(t *testing.T) {
	for _, tc := range []struct {
		line, name, value string
		err               error
	}{
		{"Host: a", "Host", "a", nil},
		{"x-a:b", "x-a", "b", nil},
		{"X:  spaced \t ", "X", "spaced", nil},
		{"X:", "X", "", nil},
		{"X: \t", "X", "", nil},
		{"X: a\tb \xff", "X", "a\tb \xff", nil},
		{"!#$%&'*+-.^_`|~09az: v", "!#$%&'*+-.^_`|~09az", "v", nil},
		{"X: a:b", "X", "a:b", nil},

		{" X: a", "", "", ErrObsFold},
		{"\tX: a", "", "", ErrObsFold},
		{"", "", "", ErrFieldName},
		{"X", "", "", ErrFieldName},
		{": a", "", "", ErrFieldName},
		{"X : a", "", "", ErrFieldName},
		{"X\t: a", "", "", ErrFieldName},
		{"X A: a", "", "", ErrFieldName},
		{"X(a): a", "", "", ErrFieldName},
		{"X\xff: a", "", "", ErrFieldName},
		{"X: a\x00b", "", "", ErrFieldValue},
		{"X: a\rb", "", "", ErrFieldValue},
		{"X: a\nb", "", "", ErrFieldValue},
		{"X: a\x7fb", "", "", ErrFieldValue},
		{"X: a\x1bb", "", "", ErrFieldValue},
	} {
		line := []byte(tc.line)
		name, value, err := ParseField(line)
		if !errors.Is(err, tc.err) || string(name) != tc.name || string(value) != tc.value {
			t.Errorf("ParseField(%q) = %q, %q, %v; want %q, %q, %v", tc.line, name, value, err, tc.name, tc.value, tc.err)
		}
		if err == nil && string(line[cap(line)-cap(value):][:len(value)]) != tc.value {
			t.Errorf("ParseField(%q): the value's offset is not cap(line)-cap(value)", tc.line)
		}
	}
}

func TestCutLine(t *testing.T) {
	for _, tc := range []struct {
		in, line string
		n        int
		err      error
	}{
		{"", "", 0, nil},
		{"abc", "", 0, nil},
		{"abc\r", "", 0, nil},
		{"abc\r\nrest", "abc", 5, nil},
		{"\r\n", "", 2, nil},
		{"a\rb\r\n", "a\rb", 5, nil}, // the CR is the line's rules' business
		{"abc\n", "", 0, ErrBareLF},
		{"\n", "", 0, ErrBareLF},
		{"a\n\r\n", "", 0, ErrBareLF},
	} {
		line, n, err := CutLine([]byte(tc.in))
		if string(line) != tc.line || n != tc.n || !errors.Is(err, tc.err) {
			t.Errorf("CutLine(%q) = %q, %d, %v; want %q, %d, %v", tc.in, line, n, err, tc.line, tc.n, tc.err)
		}
	}
}

func TestParseLength(t *testing.T) {
	for _, tc := range []struct {
		v  string
		n  int64
		ok bool
	}{
		{"0", 0, true},
		{"5", 5, true},
		{"0005", 5, true},
		{"999999999999999999", 999999999999999999, true},
		{"", 0, false},
		{"1000000000000000000", 0, false},
		{"+5", 0, false},
		{"-5", 0, false},
		{" 5", 0, false},
		{"5 ", 0, false},
		{"0x5", 0, false},
		{"5, 5", 0, false},
		{"5.0", 0, false},
	} {
		n, ok := ParseLength(tc.v)
		nb, okb := ParseLength([]byte(tc.v))
		if n != tc.n || ok != tc.ok || n != nb || ok != okb {
			t.Errorf("ParseLength(%q) = %d, %v (bytes: %d, %v); want %d, %v", tc.v, n, ok, nb, okb, tc.n, tc.ok)
		}
	}
}

func TestTokensAndValues(t *testing.T) {
	for c := 0; c < 256; c++ {
		want := c > ' ' && c < 0x7f && !strings.ContainsRune(`"(),/:;<=>?@[\]{}`, rune(c))
		if IsTokenByte(byte(c)) != want || IsToken(string(rune(c))) != (want && c < 0x80) {
			t.Errorf("IsTokenByte(%#x) = %v, want %v", c, IsTokenByte(byte(c)), want)
		}
		wantV := c >= ' ' && c != 0x7f || c == '\t'
		if ValidFieldValue([]byte{'a', byte(c), 'b'}) != wantV {
			t.Errorf("ValidFieldValue(a %#x b) = %v, want %v", c, !wantV, wantV)
		}
	}
	if IsToken("") || IsToken([]byte{}) {
		t.Error("an empty token is valid")
	}
	if got := TrimOWS(" \t a b \t "); got != "a b" {
		t.Errorf("TrimOWS = %q", got)
	}
	var elems []string
	for rest := " a ,, b\t,c d ,"; rest != ""; {
		var e string
		e, rest = NextElement(rest)
		elems = append(elems, e)
	}
	if strings.Join(elems, "|") != "a||b|c d" {
		t.Errorf("NextElement: %q", elems)
	}
}

func TestDoesNotAllocate(t *testing.T) {
	line := []byte(`5 ;a = "b c" ; d`)
	field := []byte("X-Forwarded-For:  10.0.0.1 ")
	if n := testing.AllocsPerRun(100, func() {
		_, _ = ParseChunkLine(line)
		_, _, _ = ParseField(field)
		_, _ = ParseLength("12345")
		_, _, _ = CutLine(field)
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// TestValidFieldValueWords checks the eight-bytes-at-a-time reading of
// ValidFieldValue against the rule byte by byte: every byte value at every
// position of values up to 19 bytes long (so in the first word, the
// second and the tail), among filler bytes that are allowed (HTAB, SP,
// obs-text, visible ASCII) and next to each other, as string and []byte.
func TestValidFieldValueWords(t *testing.T) {
	rule := func(v []byte) bool {
		for _, c := range v {
			if c < ' ' && c != '\t' || c == 0x7f {
				return false
			}
		}
		return true
	}
	for _, fill := range []byte{'a', '\t', ' ', 0x80, 0xff, '~'} {
		for n := 0; n < 20; n++ {
			for p := 0; p < n; p++ {
				for c := range 256 {
					v := bytes.Repeat([]byte{fill}, n)
					v[p] = byte(c)
					want := rule(v)
					if got := ValidFieldValue(v); got != want {
						t.Fatalf("ValidFieldValue(%q) = %v, want %v", v, got, want)
					}
					if got := ValidFieldValue(string(v)); got != want {
						t.Fatalf("ValidFieldValue(string %q) = %v, want %v", v, got, want)
					}
				}
			}
		}
	}
}

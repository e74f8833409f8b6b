package httpwire

import (
	"bytes"
	"errors"
)

// Errors of the head's lines and fields. Callers map them to their own
// answer (a 400 for a client, a 502 for a backend) and may wrap them.
var (
	ErrBareLF     = errors.New("httpwire: line not terminated by CRLF")
	ErrObsFold    = errors.New("httpwire: obs-fold line")
	ErrFieldName  = errors.New("httpwire: invalid field name")
	ErrFieldValue = errors.New("httpwire: control byte in field value")
)

// bytesOrString is what the checks below read: field text as received
// ([]byte) or as stored in a header map (string).
type bytesOrString interface{ ~string | ~[]byte }

// tchar marks the bytes of a token (RFC 9110 §5.6.2): visible ASCII but
// the delimiters "(),/:;<=>?@[\]{}.
var tchar = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// IsTokenByte reports whether c is a tchar (RFC 9110 §5.6.2).
func IsTokenByte(c byte) bool { return tchar[c] }

// IsToken reports whether v is a token: one or more tchar (RFC 9110
// §5.6.2). Field names and methods are tokens.
func IsToken[T bytesOrString](v T) bool {
	if len(v) == 0 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !tchar[v[i]] {
			return false
		}
	}
	return true
}

// ValidFieldValue reports whether v may be a field value as sent on the
// wire: no control byte but HTAB, no DEL (RFC 9110 §5.5; obs-text, bytes
// 0x80-0xFF, is allowed). NUL, CR and LF are therefore refused. It does
// not look at leading or trailing whitespace (see TrimOWS).
//
// It reads eight bytes at a time and looks at single bytes only in a word
// that holds a byte below SP or a DEL: a value is checked on every request
// (by the server, again before it is sent upstream, and in every response
// head), and long ones (Cookie, User-Agent) dominated parsing.
func ValidFieldValue[T bytesOrString](v T) bool {
	i := 0
	for ; i+8 <= len(v); i += 8 {
		x := uint64(v[i]) | uint64(v[i+1])<<8 | uint64(v[i+2])<<16 | uint64(v[i+3])<<24 |
			uint64(v[i+4])<<32 | uint64(v[i+5])<<40 | uint64(v[i+6])<<48 | uint64(v[i+7])<<56
		if hasCtl(x) && !validBytes(v[i:i+8]) {
			return false
		}
	}
	return validBytes(v[i:])
}

// Bytes of a word: each 0x01, each 0x80, each DEL.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
	dels  = 0x7f7f7f7f7f7f7f7f
)

// hasCtl reports whether one of the eight bytes of x is below SP (HTAB
// included) or DEL: a byte below n exists iff (x - n*ones) & ^x & highs
// is non-zero, for n <= 0x80 (a borrow can only start at such a byte);
// DEL is the zero byte of x^dels.
func hasCtl(x uint64) bool {
	y := x ^ dels
	return ((x-' '*ones)&^x|(y-ones)&^y)&highs != 0
}

// validBytes is ValidFieldValue one byte at a time.
func validBytes[T bytesOrString](v T) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// TrimOWS returns v without its leading and trailing optional whitespace,
// SP and HTAB (RFC 9110 §5.6.3).
func TrimOWS[T bytesOrString](v T) T {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}

// NextElement splits the first element off a comma-separated list
// (RFC 9110 §5.6.1): elem is OWS-trimmed and may be empty (a list may
// hold empty elements, which recipients skip); rest is what follows the
// comma, empty at the end.
func NextElement[T bytesOrString](list T) (elem, rest T) {
	for i := 0; i < len(list); i++ {
		if list[i] == ',' {
			return TrimOWS(list[:i]), list[i+1:]
		}
	}
	return TrimOWS(list), list[len(list):]
}

// CutLine finds the first line of b: the bytes before its CRLF, and n,
// the bytes it takes with the CRLF. When b holds no LF yet, n is 0 (read
// more). A LF not preceded by CR is ErrBareLF: a recipient may accept a
// bare LF in a head (RFC 9112 §2.2) but a proxy that did would read a
// message differently than a stricter hop, so none is accepted anywhere.
// A CR elsewhere in the line is left to the line's own rules (it is a
// control byte to every one of them).
func CutLine(b []byte) (line []byte, n int, err error) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return nil, 0, nil
	}
	if i == 0 || b[i-1] != '\r' {
		return nil, 0, ErrBareLF
	}
	return b[:i-1], i + 1, nil
}

// ParseField splits one field line, without its CRLF, into its name and
// its OWS-trimmed value, both sub-slices of line (so the value's offset
// in line is cap(line)-cap(value)). The rules (RFC 9112 §5.1, §5.2,
// RFC 9110 §5.5) are:
//
//   - a line starting with SP or HTAB is obs-fold: ErrObsFold (a server
//     may unfold, but a proxy that did would disagree with the next hop);
//   - the name is a token, with nothing between it and the colon:
//     ErrFieldName otherwise (an empty name, "Name :" and a line without
//     a colon included);
//   - the value has no control byte but HTAB and no DEL: ErrFieldValue.
//
// The name is returned as received; canonicalising it is the caller's.
func ParseField(line []byte) (name, value []byte, err error) {
	if len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
		return nil, nil, ErrObsFold
	}
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 || !IsToken(line[:colon]) {
		return nil, nil, ErrFieldName
	}
	value = TrimOWS(line[colon+1:])
	if !ValidFieldValue(value) {
		return nil, nil, ErrFieldValue
	}
	return line[:colon], value, nil
}

// ParseLength parses a Content-Length value: 1*DIGIT (RFC 9110 §8.6), at
// most 18 digits so it cannot overflow an int64. A sign, spaces, a list
// ("5, 5") or any other byte makes ok false; the caller refuses the
// message (RFC 9112 §6.3).
func ParseLength[T bytesOrString](v T) (n int64, ok bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// EqualFold reports whether v equals lower, a lower-case ASCII token,
// ignoring ASCII case only (RFC 9110 §5.6.2: tokens are case-insensitive
// ASCII). Unicode folding would let "chun\u212Aed" (a Kelvin sign) pass for
// chunked, which net/http and every backend refuse.
func EqualFold[T bytesOrString](v T, lower string) bool {
	if len(v) != len(lower) {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

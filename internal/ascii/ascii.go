// Package ascii holds the byte-level helpers that the HTTP/1.1 wire format
// (dataplane/httpwire) and the router's percent-decoding share. It imports
// nothing of Gantry's, so every layer may use it.
package ascii

// Unhex is the value of hex digit c (0-9, a-f, A-F: RFC 5234 HEXDIG, which
// RFC 9112's chunk-size and RFC 3986's pct-encoded use, in either case);
// false for any other byte.
func Unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

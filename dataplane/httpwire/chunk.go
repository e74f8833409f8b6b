package httpwire

import (
	"errors"

	"github.com/gantry-proxy/gantry/internal/ascii"
)

// MaxChunkSizeDigits is the most hex digits a chunk size may have
// (leading zeros count): 15 digits stay below 2^60, so a size never
// overflows an int64, and no real chunk comes near it.
const MaxChunkSizeDigits = 15

// Errors of a chunk-size line. Callers map them to their own answer and
// may wrap them.
var (
	ErrChunkSize      = errors.New("httpwire: invalid chunk size")
	ErrChunkSizeLarge = errors.New("httpwire: chunk size has more than 15 hex digits")
	ErrChunkExt       = errors.New("httpwire: invalid chunk extension")
)

// ParseChunkLine parses a chunk-size line without its CRLF (RFC 9112
// §7.1, §7.1.1) and returns the chunk size:
//
//	chunk-line     = chunk-size *( BWS ";" BWS chunk-ext-name
//	                               [ BWS "=" BWS chunk-ext-val ] )
//	chunk-size     = 1*HEXDIG
//	chunk-ext-name = token
//	chunk-ext-val  = token / quoted-string
//
// This is the one rule of both halves of the proxy. BWS ("bad"
// whitespace, SP and HTAB, RFC 9110 §5.6.3) is part of the grammar, so
// "5 ;a=b" is accepted: a recipient must parse BWS and remove it. Anything
// the grammar does not produce is refused: no "0x", sign or whitespace
// before the digits, no whitespace after the size without an extension
// ("5 "), no empty or malformed extension, no control byte but HTAB
// inside a quoted-string (so a bare CR never passes). A size needs 1 to
// MaxChunkSizeDigits digits: ErrChunkSize, ErrChunkSizeLarge; a bad
// extension is ErrChunkExt. Extensions are checked, then ignored (§7.1.1).
//
// net/http's reader differs in three ways, all where it is laxer or
// refuses what the grammar allows: it refuses BWS before ";", it accepts
// trailing whitespace and any bytes but CR in extensions, and it takes 16
// digits.
func ParseChunkLine(line []byte) (int64, error) {
	var n int64
	i := 0
	for ; i < len(line); i++ {
		d, ok := ascii.Unhex(line[i])
		if !ok {
			break
		}
		if i == MaxChunkSizeDigits {
			return 0, ErrChunkSizeLarge
		}
		n = n<<4 | int64(d)
	}
	if i == 0 {
		return 0, ErrChunkSize
	}
	if i < len(line) && !chunkExt(line[i:]) {
		if line[i] != ' ' && line[i] != '\t' && line[i] != ';' {
			return 0, ErrChunkSize // "5x", "0x5"
		}
		return 0, ErrChunkExt
	}
	return n, nil
}

// chunkExt reports whether b is one or more chunk extensions (the
// grammar of ParseChunkLine, from the first BWS on).
func chunkExt(b []byte) bool {
	for len(b) > 0 {
		b = skipBWS(b)
		if len(b) == 0 || b[0] != ';' {
			return false
		}
		b = skipBWS(b[1:])
		k := tokenLen(b)
		if k == 0 {
			return false
		}
		b = b[k:]
		if r := skipBWS(b); len(r) > 0 && r[0] == '=' {
			b = skipBWS(r[1:])
			if len(b) > 0 && b[0] == '"' {
				k = quotedLen(b)
			} else {
				k = tokenLen(b)
			}
			if k == 0 {
				return false
			}
			b = b[k:]
		}
	}
	return true
}

func skipBWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

// tokenLen is the length of the token b starts with (0: none).
func tokenLen(b []byte) int {
	i := 0
	for i < len(b) && tchar[b[i]] {
		i++
	}
	return i
}

// quotedLen is the length of the quoted-string b starts with, quotes
// included (0: none or malformed). RFC 9110 §5.6.4:
//
//	quoted-string = DQUOTE *( qdtext / quoted-pair ) DQUOTE
//	qdtext        = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text
//	quoted-pair   = "\" ( HTAB / SP / VCHAR / obs-text )
func quotedLen(b []byte) int {
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c == '\\':
			if i++; i == len(b) || b[i] < ' ' && b[i] != '\t' || b[i] == 0x7f {
				return 0
			}
		case c < ' ' && c != '\t' || c == 0x7f:
			return 0
		}
	}
	return 0
}

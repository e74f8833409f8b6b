// Package httpwire holds the HTTP/1.1 wire format that both halves of the
// dataplane parse: the client side (dataplane/h1, requests) and the
// backend side (dataplane/upstream, responses). One set of rules, so the
// proxy never reads a message one way from a client and another way from
// a backend:
//
//   - lines end in CRLF; a bare LF ends nothing (CutLine; RFC 9112 §2.2,
//     and for chunked lines errata 7633);
//   - a field line is token ":" OWS value OWS, with no whitespace before
//     the colon, no obs-fold and no control byte but HTAB in the value
//     (ParseField; RFC 9112 §5, RFC 9110 §5.5, §5.6.2);
//   - Content-Length is 1*DIGIT (ParseLength; RFC 9110 §8.6);
//   - a chunk-size line is 1*HEXDIG with chunk extensions that follow
//     their grammar, bad whitespace before ";" included (ParseChunkLine;
//     RFC 9112 §7.1.1).
//
// Everything here works on caller-owned bytes and never allocates. Role
// policies (which codings a server decodes, which status a refusal gets,
// head and line limits) stay with the callers.
package httpwire

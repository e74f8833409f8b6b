// Package dnshelper runs lego's DNS-01 providers (dnsChallenge.provider) in
// a separate program, gantry-dns (cmd/gantry-dns), shipped in the same
// directory as gantry. gantry itself links none of the providers' SDKs, so
// their package initialisers (hundreds of them: AWS, Azure, Google Cloud,
// Alibaba… clients) neither run nor touch memory in a gantry that has no DNS
// challenge; with one, the helper runs only while a challenge is being
// solved (the pattern of lego's own "exec" provider).
//
// Client is the gantry side (a lego challenge.Provider); Main is the helper
// side, given the registry of providers (package dnsproviders).
//
// # Protocol (version 1)
//
// The helper's command lines:
//
//	gantry-dns [-resolvers host:port,...] <provider> check
//	gantry-dns [-resolvers host:port,...] <provider> serve
//	gantry-dns names
//
// -resolvers are the recursive nameservers lego's DNS lookups use in the
// helper (dnsChallenge.resolvers). The provider is lego's name or alias in
// any case and reads its own environment variables, which gantry passes
// through unchanged.
//
// check builds the provider and prints one JSON object on stdout:
//
//	{"protocol":1,"timeout":<ns>,"interval":<ns>,"sequential":<ns>}
//
// timeout and interval are the provider's propagation timeout and polling
// interval (lego's defaults when it has none); sequential is present only
// for a provider that solves one domain at a time and is the wait between
// two domains. serve prints the same first line, then reads requests, one
// JSON object a line on stdin (at most MaxLine bytes):
//
//	{"id":<n>,"op":"present"|"cleanup","domain":"…","token":"…","keyAuth":"…"}
//
// and answers each, in any order, with one line {"id":<n>,"error":"…"}
// (error empty on success). One serve process keeps the provider's own
// state (record IDs kept by Present for CleanUp) between the requests of an
// order. It exits with status 0 when stdin closes, after answering every
// request it read.
//
// Exit status: 0 success, 1 the provider failed (its message on stderr),
// 2 usage error, 3 unknown provider (stderr lists the known ones). names
// prints the known provider names, one a line, sorted. The helper's log
// (lego's) goes to stderr, one line per record.
package dnshelper

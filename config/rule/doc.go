// Package rule parses Gantry's (and Traefik's) boolean rule expression
// language into a Tree, without knowing what the function names mean.
//
// The grammar is the Go-expression subset Traefik accepts for router rules
// (https://doc.traefik.io/traefik/routing/routers/#rule) and provider
// constraints (https://doc.traefik.io/traefik/providers/docker/#constraints):
//
//	expr    = and { "||" and }
//	and     = unary { "&&" unary }
//	unary   = "!" unary | primary
//	primary = "(" expr ")" | Name "(" [ string { "," string } [ "," ] ] ")"
//	string  = `raw, as written` | "Go escapes such as \\ and \" apply"
//
// Names are ASCII identifiers. Single-quoted values, bare words as
// arguments and anything else are parse errors (*Error, with the byte offset
// and the reason). The caller decides which names exist and how many
// arguments each takes: router compiles HTTP matchers (Host, PathPrefix, …),
// the Docker and Consul providers use Label/LabelRegex and Tag/TagRegex.
//
// A Tree is immutable after Parse returns and safe for concurrent reads.
// Tree.String prints a canonical form that parses back to an equal tree.
package rule

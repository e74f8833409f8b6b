package providers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gantry-proxy/gantry/config"
)

// Severity says how a Problem affects routing.
type Severity string

// Problem severities.
const (
	// SeverityError: the objects named in Problem.Objects (or the whole input
	// named by Source) were left out.
	SeverityError Severity = "error"
	// SeverityWarning: the input was used, with the caveat in Message.
	SeverityWarning Severity = "warning"
	// SeverityPending: the input is known but not routed yet, e.g. a container
	// that is starting or unhealthy (case 014).
	SeverityPending Severity = "pending"
)

// Problem is one input a provider could not use (fully), naming its source so
// an operator can find it without reading logs.
type Problem struct {
	// Provider is the provider's Name ("file", "docker", "consulcatalog", "consul").
	Provider string `json:"provider"`
	// Source locates the input: "/etc/gantry/app.yml:12:5",
	// "container web-1 label traefik.http.routers.web.rule",
	// "consul service api instance api-1 tag traefik.http.routers.api.rule",
	// "consul key traefik/http/routers/x/rule".
	Source string `json:"source"`
	// Objects lists what the problem disabled, as "kind name" with names as
	// in the provider's own snapshot (unqualified), e.g. "router web".
	Objects []string `json:"objects,omitempty"`
	// Message says what is wrong.
	Message  string   `json:"message"`
	Severity Severity `json:"severity"`
}

// String renders "docker: container web-1 label traefik.x: message".
func (p Problem) String() string {
	return fmt.Sprintf("%s: %s: %s", p.Provider, p.Source, p.Message)
}

// Snapshot is one provider's complete view of its source at one moment.
// Config is never nil. A Snapshot is immutable once published.
type Snapshot struct {
	Config   *config.Configuration
	Problems []Problem
	// Origins optionally locates objects in the source, keyed "router web",
	// "service api", "middleware auth" (unqualified names), e.g.
	// "/etc/gantry/app.yml:12:5". The API shows it with routing problems
	// (a rule that does not parse, a missing service), which only
	// router.Compile finds. A router's rule may be located too, keyed
	// "rule router web", for errors in the rule. May be nil.
	Origins map[string]string `json:"Origins,omitempty"`
	// KeepConfig says the provider cannot read its source (a file
	// provider's directory missing or unreadable at startup): the aggregator
	// keeps the Config and Origins it has for the provider (the stored ones,
	// or the last published) and shows Problems with them. Config is
	// ignored.
	KeepConfig bool `json:"-"`
	// Down says the provider cannot reach its source (Consul, a Docker
	// endpoint, ...), in a sentence with the error: as with KeepConfig the
	// aggregator keeps the configuration it has for the provider and shows
	// Problems (which should say the same, naming the source), and its
	// state is "down" with Down as its last error until a snapshot without
	// Down is published.
	Down string `json:"-"`
}

// Provider watches one source of configuration.
//
// Name is the provider's name, used to qualify its objects as "web@docker".
//
// Run publishes a complete Snapshot each time the source changes and blocks
// until ctx is done; it then returns nil. Any other return (or a panic) is
// retried by the caller with exponential backoff, while the provider's last
// Snapshot stays in effect. publish never blocks and may be called from any
// goroutine owned by Run; Run must not call it after returning.
type Provider interface {
	Name() string
	Run(ctx context.Context, publish func(Snapshot)) error
}

// SourceState is what the aggregator knows of one provider.
type SourceState struct {
	// State is "starting" (no snapshot yet), "ok", "error" (Run failed and is
	// being restarted; the last snapshot stays in effect), "stored" (served
	// from the last good configuration in the store; no snapshot yet) or
	// "down" (the source cannot be reached, Snapshot.Down; the last
	// configuration, published or stored, stays in effect).
	State       string    `json:"state"`
	LastPublish time.Time `json:"lastPublish,omitzero"`
	LastError   string    `json:"lastError,omitempty"`
	LastErrorAt time.Time `json:"lastErrorAt,omitzero"`
	Restarts    int       `json:"restarts"`
	Problems    int       `json:"problems"`
}

// Merged is the merge of every provider's latest snapshot. Names in Config are
// qualified "name@provider", and every reference inside Config is qualified
// too (an unqualified reference resolves inside the referring provider).
// A Merged is immutable once passed to apply.
type Merged struct {
	// Version is the hex SHA-256 of the canonical JSON of Config.
	Version  string                 `json:"version"`
	Config   *config.Configuration  `json:"config"`
	Problems []Problem              `json:"problems,omitempty"`
	Sources  map[string]SourceState `json:"sources,omitempty"`
	// Origins maps "router web@file" (kind and qualified name) to where the
	// object is defined, from the providers' Snapshot.Origins.
	Origins map[string]string `json:"origins,omitempty"`
	// TLSOrigins names the provider of each merged TLS object whose name is
	// not qualified, so that a stored Merged can be split back per provider
	// (Aggregator.Seed).
	TLSOrigins TLSOrigins `json:"tlsOrigins,omitzero"`
}

// TLSOrigins records which provider contributed the TLS objects of a Merged
// configuration that carry no "@provider" suffix.
type TLSOrigins struct {
	// Certificates is parallel to Config.TLS.Certificates: the provider
	// name of each certificate.
	Certificates []string `json:"certificates,omitempty"`
	// DefaultOptions and DefaultStore name the provider of the TLS options
	// and the TLS store named "default" ("" when none).
	DefaultOptions string `json:"defaultOptions,omitempty"`
	DefaultStore   string `json:"defaultStore,omitempty"`
}

// DownSnapshot is the Snapshot a provider publishes when it cannot reach
// source (named as a user knows it: "consul catalog", "docker endpoint
// unix:///var/run/docker.sock"), or source answered with what it cannot
// use (err marked with Answered): Down set, and one error Problem naming
// source and err, so /api/problems and /api/providers show the outage
// while the last configuration stays in effect.
func DownSnapshot(provider, source string, err error) Snapshot {
	msg := Outage(err) + "; keeping the last configuration"
	return Snapshot{Down: source + " " + msg, Problems: []Problem{{Provider: provider, Source: source, Severity: SeverityError, Message: msg}}}
}

// Answered marks err as the failure of a source that answered (a list
// refused for its size, a response that could not be used, a call that
// timed out half-way) rather than one that could not be reached; nil stays
// nil. errors.Is and errors.As see through it.
func Answered(err error) error {
	if err == nil {
		return nil
	}
	return answeredError{err}
}

type answeredError struct{ error }

func (e answeredError) Unwrap() error { return e.error }

// Outage words err for a problem: "failing: err" when it is marked
// Answered, "unreachable: err" otherwise.
func Outage(err error) string {
	if errors.As(err, new(answeredError)) {
		return "failing: " + err.Error()
	}
	return "unreachable: " + err.Error()
}

package dataplane

import "github.com/gantry-proxy/gantry/dataplane/observe"

// RequestEvent and Observer live in dataplane/observe (below the dataplane,
// so the observers need not import it); these aliases keep the dataplane's
// own names.
type (
	RequestEvent = observe.RequestEvent
	Observer     = observe.Observer
)

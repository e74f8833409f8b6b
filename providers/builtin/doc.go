// Package builtin is the provider named "internal": it publishes the routers
// Gantry adds for its own services, derived from the static configuration,
// the way Traefik's internal provider does
// (https://doc.traefik.io/traefik/operations/api/#insecure):
//
//   - api.insecure: router "api@internal" on entrypoint "traefik", rule
//     PathPrefix(`/api`) || PathPrefix(`/dashboard`), service
//     "api@internal" (which serves both the API and the dashboard);
//   - metrics.prometheus (unless manualRouting): router
//     "prometheus@internal", PathPrefix(`/metrics`) on
//     metrics.prometheus.entryPoint (default "traefik"), service
//     "prometheus@internal";
//   - ping: router "ping@internal", PathPrefix(`/ping`) on ping.entryPoint
//     (default "traefik"), service "ping@internal".
//
// The services themselves are not in the configuration: the dataplane
// serves "…@internal" services from handlers the binary wires in. The
// routers carry priorities at the top of the user range
// (config.MaxPriority and just below), so no user router shadows them on
// their entrypoint.
//
// The static configuration does not change while Gantry runs, so the
// provider publishes once and then waits for its context to end. Its
// package is not named "internal" because Go would then forbid importing it
// from cmd/gantry.
package builtin

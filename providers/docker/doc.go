// Package docker is the Docker provider: it watches a Docker engine and turns
// the labels of its containers into configuration snapshots, following
// Traefik v3's Docker provider
// (https://doc.traefik.io/traefik/providers/docker/) and label grammar
// (https://doc.traefik.io/traefik/routing/providers/docker/).
//
// The package splits into a watcher and a pure builder:
//
//   - Provider.Run (provider.go) lists and inspects containers, subscribes to
//     Docker events and re-lists on every relevant event (level-triggered: a
//     missed event costs nothing). It only reads from the Docker API.
//   - build (build.go) turns the inspected containers into a
//     providers.Snapshot. It does no I/O, so tests drive it with golden files.
//
// Where Gantry does better than Traefik: every decode error is a
// providers.Problem naming the container and the full label key; a bad label
// disables only the objects it touches; containers that are starting or
// unhealthy are listed as pending problems instead of vanishing silently
// (case 014); a container on several networks without a network label uses a
// network it shares with Gantry, else the first by name (never a random one);
// weighted, mirroring and failover services can be written as labels.
//
// Concurrency: a Provider is safe to Run once at a time; Run owns every
// goroutine it starts and joins them before returning. Snapshots are freshly
// built and never written after publish.
package docker

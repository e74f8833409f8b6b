//go:build race

package udpproxy

// raceEnabled: the race detector's shadow memory inflates the resident
// set, so memory bounds mean nothing there.
const raceEnabled = true

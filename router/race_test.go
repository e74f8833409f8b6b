//go:build race

package router

// raceEnabled: sync.Pool drops items at random under the race detector,
// so regexp matching allocates and allocation counts mean nothing.
const raceEnabled = true

//go:build race

package dataplane

// raceEnabled: sync.Pool drops items at random under the race detector,
// so allocation counts of pooled paths mean nothing there.
const raceEnabled = true

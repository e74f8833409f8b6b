//go:build !linux

package exepages

// Release does nothing outside Linux (no /proc/self/maps to find the
// executable's mappings): it returns 0, nil.
func Release() (int64, error) { return 0, nil }

// Package store keeps the configurations Gantry applied in a bbolt
// database (go.etcd.io/bbolt): the last good merged configuration, served at
// boot before any provider reports, and a bounded history of revisions for
// the dashboard, with Diff between two of them.
//
// A DB is safe for concurrent use. Records are zstd-compressed JSON of
// providers.Merged; a record that no longer decodes is skipped, never fatal.
// A database file that cannot be opened (corrupt, not a bbolt file) is moved
// aside and replaced by an empty one, so a bad file never causes a crash
// loop; DB.Warning says what happened.
package store

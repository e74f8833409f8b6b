package static

import "time"

// Reload outcomes (Reload.Outcome).
const (
	// ReloadApplied: every change was applied.
	ReloadApplied = "applied"
	// ReloadPartial: some changes were applied, the others refused (the
	// running configuration keeps its old value for those).
	ReloadPartial = "partial"
	// ReloadRefused: every change was refused; nothing changed.
	ReloadRefused = "refused"
	// ReloadUnchanged: the configuration read equals the running one.
	ReloadUnchanged = "unchanged"
	// ReloadInvalid: the configuration read is invalid (Error says where);
	// nothing changed.
	ReloadInvalid = "invalid"
)

// Refusal is a change a live reload did not apply, and why (a section that
// only a restart applies, a listener that could not be bound).
type Refusal struct {
	Change
	Reason string `json:"reason"`
}

// Reload is one live reload of the static configuration (issue 18):
// what triggered it, its outcome, what was applied and what refused.
type Reload struct {
	// Revision is the static revision the reload produced (the running
	// one when nothing was applied).
	Revision int       `json:"revision"`
	At       time.Time `json:"at"`
	// Trigger is "SIGHUP" or "file" (the file changed on disk).
	Trigger string    `json:"trigger"`
	Outcome string    `json:"outcome"`
	Applied []Change  `json:"applied,omitempty"`
	Refused []Refusal `json:"refused,omitempty"`
	// Error is why the configuration read is invalid (file and line).
	Error string `json:"error,omitempty"`
}

// ReloadStatus is the static configuration's state for the API
// (/api/static): its revision (1 at start, +1 per reload that applied
// something), the file it is read from, and the latest reloads, newest
// first.
type ReloadStatus struct {
	Revision int       `json:"revision"`
	File     string    `json:"file,omitempty"`
	Since    time.Time `json:"since"`
	Reloads  []Reload  `json:"reloads"`
}

package audit

import (
	"encoding/json"
	"fmt"
	"io"
)

// Report is the outcome of one audit.
type Report struct {
	// Kind is "builder" or "image".
	Kind string `json:"kind"`
	// Ref is the image reference audited, as given.
	Ref string `json:"ref"`
	// Covered is true when every image the builder makes, or every process type of the image,
	// starts through an init.
	Covered bool `json:"covered"`
	// Summary says why, in one line, when Covered.
	Summary string `json:"summary,omitempty"`
	// Problems are what leaves an image or a process type without an init, one line each.
	Problems []string `json:"problems"`
	// Warnings do not change the verdict: a configuration that does not do what it seems to.
	Warnings []string `json:"warnings,omitempty"`

	// Lifecycle and PlatformAPI are the builder's lifecycle version and the highest Platform
	// API judged; Groups are the order groups at that Platform API.
	Lifecycle   string        `json:"lifecycle,omitempty"`
	PlatformAPI string        `json:"platformAPI,omitempty"`
	Groups      []GroupReport `json:"groups,omitempty"`
	// Platforms is the verdict at each Platform API judged, oldest first.
	Platforms []PlatformReport `json:"platforms,omitempty"`
	// OptOut says whether app developers can opt out with BP_INIT_ENABLED=false, for a covered
	// builder.
	OptOut string `json:"optOut,omitempty"`

	Processes []ProcessReport `json:"processes,omitempty"`
}

// PlatformReport is the verdict on a builder at one Platform API: each order group as the
// lifecycle merges it there.
type PlatformReport struct {
	PlatformAPI string        `json:"platformAPI"`
	Covered     bool          `json:"covered"`
	Groups      []GroupReport `json:"groups"`
}

// GroupReport is one order group of a builder.
type GroupReport struct {
	// Index counts from 1, in the order of the builder's order.
	Index      int      `json:"index"`
	Buildpacks []string `json:"buildpacks"`
	Covered    bool     `json:"covered"`
	// Reason says how the group is covered, or why it is not.
	Reason string `json:"reason"`
}

// ProcessReport is one process type of an app image.
type ProcessReport struct {
	Type string `json:"type"`
	// Command is what the launcher execs: the first element of the command (for a shell
	// process, the first word of its command line).
	Command string `json:"command"`
	// Init names the init the process starts through, empty when none.
	Init string `json:"init,omitempty"`
}

// WriteText writes the report for a person: one line saying it is covered, or one line per
// problem, each led by the reference; warnings follow.
func (r Report) WriteText(w io.Writer) error {
	var lines []string
	if r.Covered {
		lines = append(lines, fmt.Sprintf("%s: covered: %s", r.Ref, r.Summary))
	}
	for _, p := range r.Problems {
		lines = append(lines, fmt.Sprintf("%s: %s", r.Ref, p))
	}
	for _, p := range r.Warnings {
		lines = append(lines, fmt.Sprintf("%s: warning: %s", r.Ref, p))
	}
	for _, l := range lines {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return fmt.Errorf("unable to write the report: %w", err)
		}
	}
	return nil
}

// WriteJSON writes the report as one JSON object.
func (r Report) WriteJSON(w io.Writer) error {
	if r.Problems == nil {
		r.Problems = []string{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("unable to write the report: %w", err)
	}
	return nil
}

// Package launchenv tells, for tools outside the init such as bin/audit, how the init takes a
// launch environment: whether it starts, and whether it wraps its program or execs it in its own
// place (BPL_INIT_ENABLED=false).
package launchenv

import "github.com/pid1-buildpacks/init/init/internal/config"

// Check reads the BPL_INIT_* variables through lookup as the init does at start. It returns the
// init's refusal, an error naming the variable, the value and what is accepted, when the init
// would exit without running its program; else whether the init stays as PID 1 (BPL_INIT_ENABLED
// is not false).
func Check(lookup func(string) (string, bool)) (enabled bool, err error) {
	c, err := config.Load(lookup)
	if err != nil {
		return false, err
	}
	return c.Enabled, nil
}

// Prefix is what every variable the init reads begins with.
const Prefix = "BPL_INIT_"

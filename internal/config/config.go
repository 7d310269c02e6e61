// Package config resolves the buildpack's build-time configuration, BP_INIT_ENABLED and
// BP_INIT_PROCESS_TYPES, through libpak's configuration resolver.
package config

import (
	"fmt"
	"strings"

	"github.com/paketo-buildpacks/libpak/v2"
)

const (
	// Enabled names the variable that turns the buildpack on or off.
	Enabled = "BP_INIT_ENABLED"
	// ProcessTypes names the variable that selects the process types to wrap.
	ProcessTypes = "BP_INIT_PROCESS_TYPES"
	// AllTypes is the BP_INIT_PROCESS_TYPES value that selects every process type.
	AllTypes = "*"
)

// Config is the resolved build-time configuration.
type Config struct {
	// Enabled is false when the buildpack must not take part in the build.
	Enabled bool
	// Types are the process types to wrap, in the order given; nil means every type.
	Types []string
}

// Resolve reads the build-time configuration. A value that is not accepted is an error naming the
// variable, the value and the accepted forms.
func Resolve(resolver libpak.ConfigurationResolver) (Config, error) {
	var c Config

	var err error
	raw, _ := resolver.Resolve(Enabled)
	if c.Enabled, err = ParseEnabled(raw); err != nil {
		return Config{}, err
	}
	raw, _ = resolver.Resolve(ProcessTypes)
	if c.Types, err = ParseTypes(raw); err != nil {
		return Config{}, err
	}
	return c, nil
}

// ParseEnabled parses a BP_INIT_ENABLED value: true or false in any case, around spaces; empty
// is true.
func ParseEnabled(raw string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "true", "":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("invalid %s %q: expected true or false", Enabled, raw)
}

// ParseTypes parses a BP_INIT_PROCESS_TYPES value: nil for every type (empty or *), else the
// types listed, each once.
func ParseTypes(raw string) ([]string, error) {
	trimmed := strings.TrimSpace(raw)
	if trimmed == "" || trimmed == AllTypes {
		return nil, nil
	}
	var types []string
	seen := map[string]bool{}
	for _, t := range strings.Split(trimmed, ",") {
		t = strings.TrimSpace(t)
		if !validType(t) {
			return nil, fmt.Errorf("invalid %s %q: expected %q or a comma-separated list of process types (letters, digits, '.', '_' and '-')", ProcessTypes, raw, AllTypes)
		}
		if !seen[t] {
			seen[t] = true
			types = append(types, t)
		}
	}
	return types, nil
}

func validType(t string) bool {
	if t == "" {
		return false
	}
	for _, r := range t {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
		default:
			return false
		}
	}
	return true
}

// Selects reports whether the process type t is to be wrapped.
func (c Config) Selects(t string) bool {
	if c.Types == nil {
		return true
	}
	for _, s := range c.Types {
		if s == t {
			return true
		}
	}
	return false
}

// Package config reads the init's launch-time configuration, the BPL_INIT_*
// environment variables.
package config

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pid1-buildpacks/init/init/internal/signals"
)

// The environment variables the init reads.
const (
	EnvEnabled          = "BPL_INIT_ENABLED"
	EnvSignalTarget     = "BPL_INIT_SIGNAL_TARGET"
	EnvGracePeriod      = "BPL_INIT_GRACE_PERIOD"
	EnvSignalRewrite    = "BPL_INIT_SIGNAL_REWRITE"
	EnvSuccessExitCodes = "BPL_INIT_SUCCESS_EXIT_CODES"
	EnvLogLevel         = "BPL_INIT_LOG_LEVEL"
)

// DefaultGracePeriod is how long stragglers get between SIGTERM and SIGKILL
// once the program has exited, when BPL_INIT_GRACE_PERIOD is not set.
const DefaultGracePeriod = 5 * time.Second

// Target says who receives forwarded signals.
type Target int

const (
	// TargetGroup sends signals to the program's process group.
	TargetGroup Target = iota
	// TargetChild sends signals to the program alone.
	TargetChild
)

// Level is a log level; a message is written when its level is at most the
// configured one.
type Level int

// The log levels, least verbose first.
const (
	LevelError Level = iota
	LevelInfo
	LevelDebug
)

// Config is the init's launch-time configuration.
type Config struct {
	Enabled          bool
	SignalTarget     Target
	GracePeriod      time.Duration
	SignalRewrite    map[unix.Signal]unix.Signal
	SuccessExitCodes []int
	LogLevel         Level
}

// Error reports a bad value of one variable and the forms it accepts.
type Error struct {
	Variable string
	Value    string
	Accepted string
}

func (e *Error) Error() string {
	return "invalid " + e.Variable + "=\"" + e.Value + "\": expected " + e.Accepted
}

// The accepted forms, as printed in errors.
const (
	AcceptedEnabled          = "true or false"
	AcceptedSignalTarget     = "group or child"
	AcceptedGracePeriod      = "a non-negative Go duration (10s, 1m30s, 500ms) or whole seconds (10)"
	AcceptedSignalRewrite    = "comma-separated FROM:TO signal pairs (TERM:QUIT,INT:TERM), names with or without SIG or numbers 1-64; FROM must be forwardable and appear once"
	AcceptedSuccessExitCodes = "comma-separated exit codes from 0 to 255 (143,130)"
	AcceptedLogLevel         = "error, info or debug"
)

// Load reads the configuration through lookup (os.LookupEnv or a stand-in).
// An unset or empty variable takes its default. The first bad value is
// returned as an *Error.
func Load(lookup func(string) (string, bool)) (Config, error) {
	c := Config{Enabled: true, GracePeriod: DefaultGracePeriod}
	var err error
	get := func(name string) string { v, _ := lookup(name); return v }

	if v := get(EnvEnabled); v != "" {
		if c.Enabled, err = ParseEnabled(v); err != nil {
			return Config{}, err
		}
	}
	if v := get(EnvSignalTarget); v != "" {
		if c.SignalTarget, err = ParseSignalTarget(v); err != nil {
			return Config{}, err
		}
	}
	if v := get(EnvGracePeriod); v != "" {
		if c.GracePeriod, err = ParseGracePeriod(v); err != nil {
			return Config{}, err
		}
	}
	if v := get(EnvSignalRewrite); v != "" {
		if c.SignalRewrite, err = ParseSignalRewrite(v); err != nil {
			return Config{}, err
		}
	}
	if v := get(EnvSuccessExitCodes); v != "" {
		if c.SuccessExitCodes, err = ParseSuccessExitCodes(v); err != nil {
			return Config{}, err
		}
	}
	if v := get(EnvLogLevel); v != "" {
		if c.LogLevel, err = ParseLogLevel(v); err != nil {
			return Config{}, err
		}
	}
	return c, nil
}

// ParseEnabled parses BPL_INIT_ENABLED: true or false, in any case.
func ParseEnabled(v string) (bool, error) {
	switch asciiLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, &Error{EnvEnabled, v, AcceptedEnabled}
}

// ParseSignalTarget parses BPL_INIT_SIGNAL_TARGET: group or child.
func ParseSignalTarget(v string) (Target, error) {
	switch asciiLower(v) {
	case "group":
		return TargetGroup, nil
	case "child":
		return TargetChild, nil
	}
	return 0, &Error{EnvSignalTarget, v, AcceptedSignalTarget}
}

// ParseGracePeriod parses BPL_INIT_GRACE_PERIOD: a Go duration such as 10s or
// 500ms, or a whole number of seconds. Negative periods are refused.
func ParseGracePeriod(v string) (time.Duration, error) {
	bad := &Error{EnvGracePeriod, v, AcceptedGracePeriod}
	if n, err := strconv.ParseUint(v, 10, 32); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, bad
	}
	return d, nil
}

// ParseSignalRewrite parses BPL_INIT_SIGNAL_REWRITE: comma-separated FROM:TO
// pairs meaning "when FROM arrives, send TO instead".
func ParseSignalRewrite(v string) (map[unix.Signal]unix.Signal, error) {
	bad := &Error{EnvSignalRewrite, v, AcceptedSignalRewrite}
	rewrite := map[unix.Signal]unix.Signal{}
	for pair := range strings.SplitSeq(v, ",") {
		fromName, toName, ok := strings.Cut(strings.TrimSpace(pair), ":")
		if !ok {
			return nil, bad
		}
		from, okFrom := signals.Parse(fromName)
		to, okTo := signals.Parse(toName)
		if !okFrom || !okTo || !signals.Forwardable(from) {
			return nil, bad
		}
		if _, dup := rewrite[from]; dup {
			return nil, bad
		}
		rewrite[from] = to
	}
	return rewrite, nil
}

// ParseSuccessExitCodes parses BPL_INIT_SUCCESS_EXIT_CODES: comma-separated
// exit codes from 0 to 255 that the init reports as 0.
func ParseSuccessExitCodes(v string) ([]int, error) {
	var codes []int
	for field := range strings.SplitSeq(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n < 0 || n > 255 {
			return nil, &Error{EnvSuccessExitCodes, v, AcceptedSuccessExitCodes}
		}
		if !slices.Contains(codes, n) {
			codes = append(codes, n)
		}
	}
	return codes, nil
}

// ParseLogLevel parses BPL_INIT_LOG_LEVEL: error, info or debug, in any case.
func ParseLogLevel(v string) (Level, error) {
	switch asciiLower(v) {
	case "error":
		return LevelError, nil
	case "info":
		return LevelInfo, nil
	case "debug":
		return LevelDebug, nil
	}
	return 0, &Error{EnvLogLevel, v, AcceptedLogLevel}
}

// asciiLower lowers ASCII letters only: every accepted value is ASCII, and
// strings.ToLower would bring the Unicode case tables into the binary.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

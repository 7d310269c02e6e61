// Package logger writes the init's messages to standard error, one line each,
// prefixed with "[init] " so that they stand apart from the program's output.
package logger

import (
	"strings"

	"golang.org/x/sys/unix"

	"github.com/pid1-buildpacks/init/init/internal/config"
)

// Prefix starts every line the init writes.
const Prefix = "[init] "

// Logger writes the messages at or below its level.
type Logger struct {
	Level config.Level
}

// Error writes a message whatever the level.
func (l Logger) Error(parts ...string) { write(parts) }

// Info writes a message when the level is info or debug.
func (l Logger) Info(parts ...string) {
	if l.Level >= config.LevelInfo {
		write(parts)
	}
}

// Debug writes a message when the level is debug.
func (l Logger) Debug(parts ...string) {
	if l.Level >= config.LevelDebug {
		write(parts)
	}
}

// InfoEnabled reports whether info messages are written, so that callers can
// skip building them.
func (l Logger) InfoEnabled() bool { return l.Level >= config.LevelInfo }

// DebugEnabled reports whether debug messages are written.
func (l Logger) DebugEnabled() bool { return l.Level >= config.LevelDebug }

// write sends the line with a single write(2) so that lines from the init
// are not interleaved with each other. Errors are dropped: standard error is
// the only place the init could report them.
func write(parts []string) {
	line := Prefix + strings.Join(parts, "") + "\n"
	for len(line) > 0 {
		n, err := unix.Write(2, []byte(line))
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		line = line[n:]
	}
}

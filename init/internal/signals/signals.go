// Package signals names Linux signals and says which of them the init can
// forward to the program it runs.
package signals

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Max is the highest signal number on Linux.
const Max = 64

// Parse returns the signal named by s: a name with or without the SIG prefix
// in any case (TERM, SIGTERM, sigterm) or a number from 1 to 64.
func Parse(s string) (unix.Signal, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 || n > Max {
			return 0, false
		}
		return unix.Signal(n), true
	}
	name := asciiUpper(s)
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	sig := unix.SignalNum(name)
	return sig, sig != 0
}

// Name returns the conventional name of sig (SIGTERM), or its number for the
// real-time signals, which have no names of their own.
func Name(sig unix.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	return "signal " + strconv.Itoa(int(sig))
}

// Forwardable reports whether the init can receive sig and pass it on to the
// program. The exceptions, each for a reason docs/how-it-works.md lists:
//   - SIGKILL and SIGSTOP cannot be caught by any process;
//   - SIGCHLD tells the init to reap, it is about the init's own children;
//   - SIGURG is the Go runtime's goroutine preemption signal, so one sent by
//     somebody else cannot be told apart from the runtime's own;
//   - SIGPROF is consumed by the Go runtime's profiler;
//   - signals 32 and 33 are reserved by the C libraries (glibc, musl) for
//     their threads, and the Go runtime uses 33 for its own;
//   - SIGTTIN and SIGTTOU are ignored by the init so that it is never stopped
//     for touching the terminal in the background.
func Forwardable(sig unix.Signal) bool {
	switch sig {
	case unix.SIGKILL, unix.SIGSTOP, unix.SIGCHLD, unix.SIGURG, unix.SIGPROF,
		unix.SIGTTIN, unix.SIGTTOU, 32, 33:
		return false
	}
	return sig >= 1 && sig <= Max
}

// asciiUpper raises ASCII letters only; signal names are ASCII, and
// strings.ToUpper would bring the Unicode case tables into the binary.
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - ('a' - 'A')
		}
	}
	return string(b)
}

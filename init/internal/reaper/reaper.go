// Package reaper collects the exit status of the init's children and finds
// and signals the processes of the init's subtree.
//
// The init has a single owner of wait4: Reap. Nothing else in the process
// may wait for children, otherwise the two waiters race for every status.
package reaper

import (
	"golang.org/x/sys/unix"
)

// Reap collects every child that has exited, without blocking, calling
// exited for each. It returns whether children remain (alive or stopped).
func Reap(exited func(pid int, status unix.WaitStatus)) (remaining bool) {
	return ReapOrStopped(0, exited)
}

// ReapOrStopped is Reap that also reports children that stopped, with
// options unix.WUNTRACED (status.Stopped() then holds; the child remains).
func ReapOrStopped(options int, exited func(pid int, status unix.WaitStatus)) (remaining bool) {
	for {
		var status unix.WaitStatus
		pid, err := unix.Wait4(-1, &status, unix.WNOHANG|options, nil)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil: // ECHILD: no children at all
			return false
		case pid == 0:
			return true
		}
		exited(pid, status)
	}
}

// ExitCode is the exit code a shell reports for status: the program's own
// exit code, or 128+N when signal N killed it.
func ExitCode(status unix.WaitStatus) int {
	if status.Signaled() {
		return 128 + int(status.Signal())
	}
	return status.ExitStatus()
}

// Package reaper collects the exit status of the init's children and finds
// and signals the processes of the init's subtree.
//
// The init has a single owner of wait4: Reap. Nothing else in the process
// may wait for children, otherwise the two waiters race for every status.
package reaper

import (
	"unsafe"

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
		pid, status := Next(options)
		if pid <= 0 {
			return pid == 0
		}
		exited(pid, status)
	}
}

// Next reaps one child that has exited (with options unix.WUNTRACED, or
// reports one that stopped), without blocking, and returns its pid and wait
// status. It returns pid 0 when children remain but none has exited, and
// -1 when the init has no children at all. It does not allocate, and, as
// wait4 does not block with WNOHANG, it is a raw system call: the Go
// runtime does not hand the thread's P over (and wake its monitor thread)
// for it, as it does for a call that may block.
func Next(options int) (pid int, status unix.WaitStatus) {
	for {
		var ws int32
		r, _, errno := unix.RawSyscall6(unix.SYS_WAIT4, ^uintptr(0), uintptr(unsafe.Pointer(&ws)), uintptr(unix.WNOHANG|options), 0, 0, 0)
		switch {
		case errno == unix.EINTR:
			continue
		case errno != 0: // ECHILD: no children at all
			return -1, 0
		}
		return int(r), unix.WaitStatus(ws)
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

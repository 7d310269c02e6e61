// Command gofloor is the Go floor of the init benchmark: the least a Go init must do.
//
//	gofloor -- PROG [ARG...]
//
// It fork/execs PROG (a path; PATH is not searched) with its own environment and standard
// streams, waits for it and exits with its exit code, or 128+N when signal N ended it. It
// does nothing else: it handles no signal and reaps no other process. Its start-up and
// resident size are what the Go runtime costs an init before the init does any work of its
// own.
package main

import (
	"os"
	"syscall"
)

func main() {
	args := os.Args[1:]
	if len(args) < 2 || args[0] != "--" {
		os.Stderr.WriteString("gofloor: usage: gofloor -- PROG [ARG...]\n")
		os.Exit(2)
	}
	pid, err := syscall.ForkExec(args[1], args[1:], &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
	})
	if err != nil {
		os.Stderr.WriteString("gofloor: unable to start " + args[1] + ": " + err.Error() + "\n")
		os.Exit(127)
	}
	var status syscall.WaitStatus
	for {
		_, err = syscall.Wait4(pid, &status, 0, nil)
		if err != syscall.EINTR {
			break
		}
	}
	switch {
	case err != nil:
		os.Stderr.WriteString("gofloor: unable to wait for " + args[1] + ": " + err.Error() + "\n")
		os.Exit(1)
	case status.Signaled():
		os.Exit(128 + int(status.Signal()))
	}
	os.Exit(status.ExitStatus())
}

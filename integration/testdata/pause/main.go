// Command pause is the sandbox (pause) image of the Pods integration tests: the CRI needs one
// for every pod and none can be pulled here. Like Kubernetes' pause it holds the pod's
// namespaces and does nothing else: it waits for SIGINT or SIGTERM and exits 0, and, when it
// is PID 1 (a pod whose containers share its PID namespace), reaps every child the kernel gives
// it, so that orphans of the pod's containers never stay zombies.
//
// scripts/pods.sh builds it statically (CGO_ENABLED=0) and packages it as the image
// pid1-pods/pause:local.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: pause (takes no arguments; exits 0 on SIGINT or SIGTERM)")
		os.Exit(2)
	}
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "pause: warning: not PID 1, the pod's orphans are not given to it")
	}
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig == syscall.SIGCHLD {
			reap()
			continue
		}
		fmt.Fprintf(os.Stderr, "pause: got %v, exiting\n", sig)
		os.Exit(0)
	}
}

// reap waits for every child that has exited; SIGCHLD is not queued, so one signal may stand
// for many.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ECHILD), pid == 0:
			return
		case err != nil:
			fmt.Fprintf(os.Stderr, "pause: unable to wait for children: %v\n", err)
			return
		}
	}
}

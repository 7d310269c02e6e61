package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"syscall"
	"time"
)

// startupVariant is one way of running /bin/true: bare, or through one init.
type startupVariant struct {
	name string
	argv []string
}

// startupResult holds the wall-clock times of fork+exec+wait of each variant.
type startupResult struct {
	asPID1 bool
	times  map[string]sample
	order  []string
}

// measureStartup runs every variant runs times, round-robin with a rotating start so that
// drift (page cache, CPU frequency, other load) affects all variants alike. With asPID1 each
// run gets a fresh PID namespace (CLONE_NEWPID, no /proc mount), bare /bin/true included.
func measureStartup(inits []*initProgram, truePath string, runs, warmup int, asPID1 bool) (*startupResult, error) {
	variants := []startupVariant{{name: "bare", argv: []string{truePath}}}
	for _, in := range inits {
		argv := in.childArgs(truePath)
		if asPID1 {
			argv = in.pid1Args(truePath)
		}
		variants = append(variants, startupVariant{name: in.name, argv: argv})
	}

	devNull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("unable to open %s: %w", os.DevNull, err)
	}
	defer devNull.Close()
	attr := &syscall.ProcAttr{
		Env:   []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
		Files: []uintptr{devNull.Fd(), devNull.Fd(), devNull.Fd()},
		Sys:   &syscall.SysProcAttr{},
	}
	if asPID1 {
		attr.Sys.Cloneflags = syscall.CLONE_NEWPID
	}

	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	res := &startupResult{asPID1: asPID1, times: map[string]sample{}}
	for _, v := range variants {
		res.order = append(res.order, v.name)
	}
	for r := -warmup; r < runs; r++ {
		for i := range variants {
			v := variants[(i+r+warmup)%len(variants)]
			d, err := timeRun(v.argv, attr)
			if err != nil {
				return nil, fmt.Errorf("start-up run of %s: %w", v.name, err)
			}
			if r >= 0 {
				res.times[v.name] = append(res.times[v.name], d)
			}
		}
	}
	return res, nil
}

// timeRun returns the wall-clock time from before fork to after wait4 of argv, and fails
// unless it exits 0.
func timeRun(argv []string, attr *syscall.ProcAttr) (time.Duration, error) {
	start := time.Now()
	pid, err := syscall.ForkExec(argv[0], argv, attr)
	if err != nil {
		return 0, fmt.Errorf("unable to start %v: %w", argv, err)
	}
	var ws syscall.WaitStatus
	for {
		_, err = syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			break
		}
	}
	elapsed := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("unable to wait for %v: %w", argv, err)
	}
	if !ws.Exited() || ws.ExitStatus() != 0 {
		return 0, fmt.Errorf("%v ended with status %#x, expected exit 0", argv, uint32(ws))
	}
	return elapsed, nil
}

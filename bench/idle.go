package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"time"
)

// idleResult is the resident size, threads and wake-ups of an init, as PID 1 with a
// sleeping child, over an idle window.
type idleResult struct {
	rssKiB, rssStartKiB int64
	anonKiB, fileKiB    int64
	threads             int
	wakeups             int64
}

// backgroundLoad is the share of all CPUs that was busy during the idle window, when the
// benchmark itself does nothing: the load other processes put on the machine.
var backgroundLoad float64

// measureIdle starts every init at once, each as PID 1 of its own namespace with `sleep`
// as its child, lets them settle, and counts their context switches over window. The
// inits idle side by side, so one window serves all of them.
func measureIdle(inits []*initProgram, settle, window time.Duration) (map[string]idleResult, error) {
	sleepPath, err := exec.LookPath("sleep")
	if err != nil {
		return nil, fmt.Errorf("unable to find sleep: %w", err)
	}
	sleepReal, err := filepath.EvalSymlinks(sleepPath)
	if err != nil {
		return nil, fmt.Errorf("unable to resolve %s: %w", sleepPath, err)
	}
	running := map[string]*pid1{}
	defer func() {
		for _, p := range running {
			p.kill()
		}
	}()
	for _, in := range inits {
		p, err := startPID1(in, nil, sleepPath, "3600")
		if err != nil {
			return nil, err
		}
		running[in.name] = p
		if _, err := waitForChild(p.hostPID, sleepReal, 5*time.Second); err != nil {
			return nil, fmt.Errorf("%s: %w (stderr: %q)", in.name, err, p.stderr.String())
		}
	}
	time.Sleep(settle)

	results := map[string]idleResult{}
	before := map[string]int64{}
	for _, in := range inits {
		pid := running[in.name].hostPID
		st, err := readStatus(pid)
		if err != nil {
			return nil, err
		}
		cs, err := contextSwitches(pid)
		if err != nil {
			return nil, err
		}
		results[in.name] = idleResult{rssStartKiB: st.rssKiB}
		before[in.name] = cs
	}
	busy0, total0, err := cpuBusy()
	if err != nil {
		return nil, err
	}
	time.Sleep(window)
	busy1, total1, err := cpuBusy()
	if err != nil {
		return nil, err
	}
	backgroundLoad = float64(busy1-busy0) / float64(total1-total0)
	for _, in := range inits {
		pid := running[in.name].hostPID
		cs, err := contextSwitches(pid)
		if err != nil {
			return nil, err
		}
		st, err := readStatus(pid)
		if err != nil {
			return nil, err
		}
		r := results[in.name]
		r.wakeups = cs - before[in.name]
		r.rssKiB = st.rssKiB
		r.anonKiB, r.fileKiB = st.anonKiB, st.fileKiB
		r.threads = st.threads
		results[in.name] = r
	}
	return results, nil
}

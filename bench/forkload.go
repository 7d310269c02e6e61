package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The fork() orphan load. The reaping benchmark (orphans.go) releases orphans a thousand at a
// time; here each init as PID 1 runs this binary in stream mode, which makes orphans one after
// the other: it forks a middle child that forks the orphan, and both exit at once, so the init
// is woken for every orphan, as under a program that forks short-lived helpers all day. The
// figures are the init's CPU time (every thread, schedstat), its context switches (every
// thread) and its RSS before and after the stream.

// spawnExitingOrphan forks a middle child that forks an orphan; both exit at once. The
// children run only raw system calls.
//
//go:nosplit
//go:norace
func spawnExitingOrphan() (int, syscall.Errno) {
	mid, _, errno := syscall.RawSyscall6(syscall.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0, 0, 0, 0)
	if errno != 0 || mid != 0 {
		return int(mid), errno
	}
	syscall.RawSyscall6(syscall.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0, 0, 0, 0)
	syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
	return 0, 0
}

// streamMain is stream mode: after a line on stdin, n orphans one after the other, then
// "done" on stdout; it exits at EOF of stdin.
func streamMain(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("stream mode expects N, got %q", args)
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 {
		return fmt.Errorf("stream mode expects a positive integer N, got %q", args[0])
	}
	in := bufio.NewReader(os.Stdin)
	if _, err := in.ReadString('\n'); err != nil {
		return fmt.Errorf("unable to read stdin: %w", err)
	}
	for i := 0; i < n; i++ {
		mid, errno := spawnExitingOrphan()
		if errno == syscall.EAGAIN || errno == syscall.EINTR {
			i--
			continue
		}
		if errno != 0 {
			return fmt.Errorf("unable to fork orphan %d: %w", i, errno)
		}
		var ws syscall.WaitStatus
		for {
			if _, err := syscall.Wait4(mid, &ws, 0, nil); err != syscall.EINTR {
				break
			}
		}
	}
	fmt.Println("done")
	io.Copy(io.Discard, in)
	return nil
}

// forkLoadResult is what the stream cost one init.
type forkLoadResult struct {
	cpu                 time.Duration
	switches            int64
	rssBefore, rssAfter int64 // KiB
}

// measureForkLoad runs the stream of n orphans under every init in turn, each as PID 1 of its
// own namespace.
func measureForkLoad(inits []*initProgram, self string, n int) (map[string]forkLoadResult, error) {
	results := map[string]forkLoadResult{}
	for _, in := range inits {
		p, stdinW, stdoutR, err := startPiped(in, self, "__stream", strconv.Itoa(n))
		if err != nil {
			return nil, err
		}
		res, err := streamUnder(p, stdinW, stdoutR)
		stdinW.Close()
		stdoutR.Close()
		if werr := p.wait(30 * time.Second); err == nil && werr != nil {
			err = fmt.Errorf("%s after the stream: %w (stderr: %q)", in.name, werr, p.stderr.String())
		}
		if err != nil {
			p.kill()
			return nil, err
		}
		results[in.name] = res
		debugf("fork load %s: CPU %s, %d context switches, RSS %d -> %d KiB", in.name, res.cpu, res.switches, res.rssBefore, res.rssAfter)
	}
	return results, nil
}

func streamUnder(p *pid1, stdin io.Writer, stdout io.Reader) (forkLoadResult, error) {
	var r forkLoadResult
	time.Sleep(200 * time.Millisecond)
	before, err := readStatus(p.hostPID)
	if err != nil {
		return r, err
	}
	cpu0, err := cpuTime(p.hostPID)
	if err != nil {
		return r, err
	}
	sw0, err := contextSwitches(p.hostPID)
	if err != nil {
		return r, err
	}
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		return r, fmt.Errorf("unable to start the stream under %s: %w", p.init.name, err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "done" {
		return r, fmt.Errorf("the stream under %s stopped: %q, %v (stderr: %q)", p.init.name, line, err, p.stderr.String())
	}
	time.Sleep(200 * time.Millisecond) // the last orphans reaped
	cpu1, err := cpuTime(p.hostPID)
	if err != nil {
		return r, err
	}
	sw1, err := contextSwitches(p.hostPID)
	if err != nil {
		return r, err
	}
	after, err := readStatus(p.hostPID)
	if err != nil {
		return r, err
	}
	r.cpu, r.switches = cpu1-cpu0, sw1-sw0
	r.rssBefore, r.rssAfter = before.rssKiB, after.rssKiB
	return r, nil
}

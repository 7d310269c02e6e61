package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// taskStatus holds the fields of /proc/<pid>/status the benchmark reports.
type taskStatus struct {
	rssKiB, anonKiB, fileKiB int64
	threads                  int
}

func readStatus(pid int) (taskStatus, error) {
	path := fmt.Sprintf("/proc/%d/status", pid)
	data, err := os.ReadFile(path)
	if err != nil {
		return taskStatus{}, fmt.Errorf("unable to read %s: %w", path, err)
	}
	var st taskStatus
	var sawRSS, sawThreads bool
	for _, line := range strings.Split(string(data), "\n") {
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		fields := strings.Fields(value)
		switch key {
		case "VmRSS":
			if len(fields) != 2 || fields[1] != "kB" {
				return st, fmt.Errorf("unexpected VmRSS line %q in %s", line, path)
			}
			st.rssKiB, err = strconv.ParseInt(fields[0], 10, 64)
			sawRSS = err == nil
		case "RssAnon", "RssFile":
			if len(fields) != 2 || fields[1] != "kB" {
				return st, fmt.Errorf("unexpected %s line %q in %s", key, line, path)
			}
			n, err := strconv.ParseInt(fields[0], 10, 64)
			if err != nil {
				return st, fmt.Errorf("bad %s line %q in %s: %w", key, line, path, err)
			}
			if key == "RssAnon" {
				st.anonKiB = n
			} else {
				st.fileKiB = n
			}
		case "Threads":
			st.threads, err = strconv.Atoi(strings.TrimSpace(value))
			sawThreads = err == nil
		}
	}
	if !sawRSS || !sawThreads {
		return st, fmt.Errorf("no VmRSS or Threads in %s", path)
	}
	return st, nil
}

// contextSwitches sums voluntary and involuntary context switches over every thread of pid.
// A task that sleeps without waking up does not add to it.
func contextSwitches(pid int) (int64, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("unable to list the threads of pid %d (%v)", pid, err)
	}
	var total int64
	for _, path := range tasks {
		data, err := os.ReadFile(path)
		if err != nil {
			return 0, fmt.Errorf("unable to read %s: %w", path, err)
		}
		found := 0
		for _, line := range strings.Split(string(data), "\n") {
			key, value, ok := strings.Cut(line, ":")
			if !ok || (key != "voluntary_ctxt_switches" && key != "nonvoluntary_ctxt_switches") {
				continue
			}
			n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("bad %s in %s: %w", key, path, err)
			}
			total += n
			found++
		}
		if found != 2 {
			return 0, fmt.Errorf("no context switch counters in %s", path)
		}
	}
	return total, nil
}

// children lists the child processes of pid over all of its threads.
func children(pid int) ([]int, error) {
	files, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("unable to list the threads of pid %d (%v)", pid, err)
	}
	var pids []int
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // the thread went away
		}
		for _, field := range strings.Fields(string(data)) {
			n, err := strconv.Atoi(field)
			if err != nil {
				return nil, fmt.Errorf("bad pid %q in %s", field, f)
			}
			pids = append(pids, n)
		}
	}
	return pids, nil
}

func exeOf(pid int) string {
	exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	return exe
}

// waitForChild polls until pid has a child running exe and returns its pid.
func waitForChild(pid int, exe string, timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		kids, err := children(pid)
		if err != nil {
			return 0, err
		}
		for _, k := range kids {
			if exeOf(k) == exe {
				return k, nil
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	return 0, fmt.Errorf("pid %d started no child running %s within %s", pid, exe, timeout)
}

// pid1 is an init running as PID 1 of its own PID namespace, started with
// `unshare --pid --fork --mount-proc --kill-child`.
type pid1 struct {
	init    *initProgram
	unshare *exec.Cmd
	stderr  bytes.Buffer
	hostPID int // the init, as seen from the harness
	exited  chan struct{}
	waitErr error
}

// startPID1 runs prog through in as PID 1 of a new PID namespace and waits until the init
// has replaced unshare's forked child.
func startPID1(in *initProgram, stdout io.Writer, prog ...string) (*pid1, error) {
	return startPID1With(in, nil, stdout, prog...)
}

// startPID1With is startPID1 with the given stdin too.
func startPID1With(in *initProgram, stdin io.Reader, stdout io.Writer, prog ...string) (*pid1, error) {
	args := append([]string{"--pid", "--fork", "--mount-proc", "--kill-child"}, in.pid1Args(prog...)...)
	p := &pid1{init: in, unshare: exec.Command("unshare", args...), exited: make(chan struct{})}
	p.unshare.Stdin = stdin
	p.unshare.Stdout = stdout
	p.unshare.Stderr = &p.stderr
	if err := p.unshare.Start(); err != nil {
		return nil, fmt.Errorf("unable to start unshare for %s: %w", in.name, err)
	}
	go func() {
		p.waitErr = p.unshare.Wait()
		close(p.exited)
	}()
	hostPID, err := waitForChild(p.unshare.Process.Pid, in.realPth, 5*time.Second)
	if err != nil {
		p.kill()
		return nil, fmt.Errorf("%s did not start as PID 1: %w (stderr: %q)", in.name, err, p.stderr.String())
	}
	p.hostPID = hostPID
	return p, nil
}

// wait waits for unshare, hence the namespace, to end.
func (p *pid1) wait(timeout time.Duration) error {
	select {
	case <-p.exited:
		return p.waitErr
	case <-time.After(timeout):
		p.kill()
		return fmt.Errorf("%s as PID 1 did not exit within %s; killed (stderr: %q)", p.init.name, timeout, p.stderr.String())
	}
}

// kill ends the namespace: SIGKILL to its PID 1 makes the kernel kill every process in it.
func (p *pid1) kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	if p.hostPID > 0 {
		_ = syscall.Kill(p.hostPID, syscall.SIGKILL)
	}
	_ = p.unshare.Process.Kill()
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
	}
}

// cpuTime sums the time every thread of pid has run on a CPU (/proc/PID/task/*/schedstat,
// first field, nanoseconds). Children are not included.
func cpuTime(pid int) (time.Duration, error) {
	files, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(files) == 0 {
		return 0, fmt.Errorf("unable to list the threads of pid %d (%v)", pid, err)
	}
	var total time.Duration
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // the thread went away
		}
		fields := strings.Fields(string(data))
		if len(fields) < 1 {
			return 0, fmt.Errorf("unexpected contents of %s: %q", f, data)
		}
		ns, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("bad run time in %s: %w", f, err)
		}
		total += time.Duration(ns)
	}
	return total, nil
}

// cpuBusy reads the busy and total jiffies of all CPUs from /proc/stat.
func cpuBusy() (busy, total int64, err error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("unable to read /proc/stat: %w", err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fields := strings.Fields(line)
	if len(fields) < 6 || fields[0] != "cpu" {
		return 0, 0, fmt.Errorf("unexpected first line of /proc/stat: %q", line)
	}
	for i, f := range fields[1:] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("bad /proc/stat field %q: %w", f, err)
		}
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total, nil
}

// startPiped starts prog under in as PID 1 with a pipe to its stdin and one from its stdout, and
// returns their other ends.
func startPiped(in *initProgram, prog ...string) (p *pid1, stdin io.WriteCloser, stdout io.ReadCloser, err error) {
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("unable to make a pipe: %w", err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return nil, nil, nil, fmt.Errorf("unable to make a pipe: %w", err)
	}
	p, err = startPID1With(in, stdinR, stdoutW, prog...)
	stdinR.Close()
	stdoutW.Close()
	if err != nil {
		stdinW.Close()
		stdoutR.Close()
		return nil, nil, nil, err
	}
	return p, stdinW, stdoutR, nil
}

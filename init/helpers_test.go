package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// result is how a run of the init ended.
type result struct {
	Code    int
	Stdout  string
	Stderr  string
	Elapsed time.Duration
}

// run starts the init as PID 1 of a new PID namespace (pid1) or as a plain
// child of the test, waits for it and returns how it ended.
func run(t *testing.T, pid1 bool, env []string, args ...string) result {
	t.Helper()
	cmd := command(pid1, env, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{Stdout: stdout.String(), Stderr: stderr.String(), Elapsed: time.Since(start)}
	if exit, ok := err.(*exec.ExitError); ok {
		r.Code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("unable to run %v: %s", cmd.Args, err)
	}
	return r
}

// command prepares a run of the init with env added to the test's own.
func command(pid1 bool, env []string, args ...string) *exec.Cmd {
	return commandVia(nil, pid1, env, args...)
}

// commandVia prepares a run of the init through prefix, a command that
// execs the init (setpriv, a test helper).
func commandVia(prefix []string, pid1 bool, env []string, args ...string) *exec.Cmd {
	argv := append(append(prefix, initArgv()...), args...)
	if pid1 {
		argv = append([]string{"unshare", "--pid", "--fork", "--mount-proc", "--kill-child"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// initArgv is the command that runs the init: the init, or the runner
// (qemu-user) and the init.
func initArgv() []string { return append(append([]string{}, runner...), initBin) }

// initLine is initArgv as a shell word list, for script(1) and sh -c.
func initLine() string { return strings.Join(initArgv(), " ") }

// startPID1 starts the init as PID 1 of a new PID namespace and returns the
// command and the init's pid as seen from the test (the host).
func startPID1(t *testing.T, env []string, args ...string) (*exec.Cmd, *syncBuffer, int) {
	return startPID1Via(t, nil, env, args...)
}

// startPID1Via is startPID1 through prefix (see commandVia).
func startPID1Via(t *testing.T, prefix []string, env []string, args ...string) (*exec.Cmd, *syncBuffer, int) {
	t.Helper()
	g := NewWithT(t)
	cmd := commandVia(prefix, true, env, args...)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	g.Expect(cmd.Start()).To(Succeed())
	var pid int
	g.Eventually(func() int {
		pid = childOf(cmd.Process.Pid)
		return pid
	}, 5*time.Second, 5*time.Millisecond).ShouldNot(BeZero(), "the init never started under unshare")
	g.Eventually(func() string { return comm(pid) }, 5*time.Second, 5*time.Millisecond).Should(Equal(initComm))
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, &stderr, pid
}

// waitAtMost waits for cmd, killing it and its children (under unshare, the
// namespace's PID 1, and so the whole namespace) after limit, and returns
// its exit code and how long the wait took.
func waitAtMost(t *testing.T, cmd *exec.Cmd, limit time.Duration) (int, time.Duration) {
	start := time.Now()
	timer := time.AfterFunc(limit, func() {
		for _, pid := range children(cmd.Process.Pid) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		cmd.Process.Kill()
	})
	defer timer.Stop()
	code := wait(t, cmd)
	return code, time.Since(start)
}

// wait waits for cmd and returns its exit code.
func wait(t *testing.T, cmd *exec.Cmd) int {
	err := cmd.Wait()
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode()
	}
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return 0
}

// childOf returns the lowest pid among the children of pid, or 0.
func childOf(pid int) int {
	lowest := 0
	for _, n := range children(pid) {
		if lowest == 0 || n < lowest {
			lowest = n
		}
	}
	return lowest
}

// children returns the pids of the children of pid.
func children(pid int) []int {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	var pids []int
	for _, file := range tasks {
		for _, field := range strings.Fields(readFile(file)) {
			if n, _ := strconv.Atoi(field); n > 0 {
				pids = append(pids, n)
			}
		}
	}
	return pids
}

func comm(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return strings.TrimSpace(string(b))
}

// stat returns the state letter and parent pid of pid from /proc.
func stat(pid int) (state string, ppid int) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	ppid, _ = strconv.Atoi(fields[1])
	return fields[0], ppid
}

// caughtSignals returns the SigCgt mask of pid.
func caughtSignals(pid int) uint64 {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return n
		}
	}
	return 0
}

func kill(t *testing.T, pid int, sig syscall.Signal) {
	NewWithT(t).Expect(syscall.Kill(pid, sig)).To(Succeed())
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func itoa(n int) string { return strconv.Itoa(n) }

// replaceDir puts dir in place of DIR in s.
func replaceDir(s, dir string) string { return strings.ReplaceAll(s, "DIR", dir) }

// syncBuffer collects output written by another goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

package main_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

// forwardable lists, in order, every signal the init forwards that the
// recording helper (os/signal) can receive: all but SIGKILL and SIGSTOP
// (uncatchable), SIGCHLD (reaping), SIGTTIN and SIGTTOU (ignored), SIGURG
// and SIGPROF (the Go runtime's), 32 and 33 (libc's), and 34, which the init
// forwards but the Go runtime has no handler for (stress_signals_test.go).
func forwardable() []syscall.Signal {
	var sigs []syscall.Signal
	for n := 1; n <= 64; n++ {
		switch n {
		case 9, 17, 19, 21, 22, 23, 27, 32, 33, 34:
			continue
		}
		sigs = append(sigs, syscall.Signal(n))
	}
	return sigs
}

func testSignals(t *testing.T, context spec.G, it spec.S) {
	var (
		Expect     = NewWithT(t).Expect
		Eventually = NewWithT(t).Eventually
		dir        string
	)

	it.Before(func() {
		Expect(setupErr).NotTo(HaveOccurred())
		dir = t.TempDir()
	})

	// lines returns the lines the recording helper wrote after "ready".
	lines := func(file string) []string {
		got := strings.Split(strings.TrimSpace(readFile(file)), "\n")
		if len(got) == 0 || !strings.HasPrefix(got[0], "ready") {
			return nil
		}
		return got[1:]
	}
	ready := func(file string) {
		Eventually(func() string { return readFile(file) }, 5*time.Second, 5*time.Millisecond).Should(HavePrefix("ready"))
	}

	for _, c := range []struct {
		name     string
		from, to syscall.Signal
	}{{"standard", 1, 31}, {"real-time", 35, 64}} {
		it("forwards each forwardable "+c.name+" signal once and in order, then SIGTERM, as PID 1", func() {
			file := filepath.Join(dir, "signals")
			cmd, stderr, pid := startPID1(t, nil, helperBin, "record", file)
			ready(file)
			var want []string
			for _, sig := range forwardable() {
				if sig == syscall.SIGTERM || sig < c.from || sig > c.to {
					continue // SIGTERM last: the helper exits on it
				}
				kill(t, pid, sig)
				want = append(want, itoa(int(sig)))
				Eventually(func() []string { return lines(file) }, 5*time.Second, time.Millisecond).Should(Equal(want), "after %s", sig)
			}
			kill(t, pid, syscall.SIGTERM)
			Expect(wait(t, cmd)).To(Equal(0), stderr.String())
			Expect(lines(file)).To(Equal(append(want, "15")))
		})
	}

	it("neither forwards SIGTTIN and SIGTTOU nor stops for them", func() {
		file := filepath.Join(dir, "signals")
		cmd, stderr, pid := startPID1(t, nil, helperBin, "record", file)
		ready(file)
		kill(t, pid, syscall.SIGTTIN)
		kill(t, pid, syscall.SIGTTOU)
		kill(t, pid, syscall.SIGTSTP)
		Eventually(func() []string { return lines(file) }, 5*time.Second, time.Millisecond).Should(ContainElement("20"))
		kill(t, pid, syscall.SIGUSR1)
		Eventually(func() []string { return lines(file) }, 5*time.Second, time.Millisecond).Should(ContainElement("10"))
		state, _ := stat(pid)
		Expect(state).To(Equal("S"))
		kill(t, pid, syscall.SIGTERM)
		Expect(wait(t, cmd)).To(Equal(0), stderr.String())
		Expect(lines(file)).To(Equal([]string{"20", "10", "15"}))
	})

	context("BPL_INIT_SIGNAL_TARGET", func() {
		// The program is a shell that starts a second recorder in its process
		// group, then becomes the first.
		start := func(target string) (*exec.Cmd, int, string, string) {
			program, other := filepath.Join(dir, "program"), filepath.Join(dir, "other")
			cmd, _, pid := startPID1(t, []string{"BPL_INIT_SIGNAL_TARGET=" + target, "BPL_INIT_GRACE_PERIOD=1"},
				"sh", "-c", `"$0" record "$1" & exec "$0" record "$2"`, helperBin, other, program)
			ready(program)
			ready(other)
			return cmd, pid, program, other
		}

		it("sends signals to the program's whole process group by default", func() {
			cmd, pid, program, other := start("group")
			kill(t, pid, syscall.SIGUSR1)
			Eventually(func() []string { return lines(program) }, 5*time.Second).Should(Equal([]string{"10"}))
			Eventually(func() []string { return lines(other) }, 5*time.Second).Should(Equal([]string{"10"}))
			kill(t, pid, syscall.SIGTERM)
			Expect(wait(t, cmd)).To(Equal(0))
			// SIGTERM reached it through the group, or, when the program exited
			// first, from the init's shutdown, possibly with its SIGCONT
			Expect(lines(other)).To(BeElementOf([]string{"10", "15"}, []string{"10", "18", "15"}))
		})

		it("sends signals to the program alone with child", func() {
			cmd, pid, program, other := start("child")
			kill(t, pid, syscall.SIGUSR1)
			Eventually(func() []string { return lines(program) }, 5*time.Second).Should(Equal([]string{"10"}))
			NewWithT(t).Consistently(func() []string { return lines(other) }, 200*time.Millisecond).Should(BeEmpty())
			kill(t, pid, syscall.SIGTERM)
			Expect(wait(t, cmd)).To(Equal(0))
			// the other recorder got nothing but the init's shutdown signals:
			// SIGTERM, and SIGCONT when it comes in before the SIGTERM is handled
			Expect(lines(other)).To(ContainElement("15"))
			Expect(lines(other)).To(BeElementOf([]string{"15"}, []string{"18", "15"}))
		})
	})

	it("rewrites signals listed in BPL_INIT_SIGNAL_REWRITE", func() {
		file := filepath.Join(dir, "signals")
		cmd, _, pid := startPID1(t, []string{"BPL_INIT_SIGNAL_REWRITE=USR1:USR2, SIGINT:sigquit"}, helperBin, "record", file)
		ready(file)
		kill(t, pid, syscall.SIGUSR1)
		Eventually(func() []string { return lines(file) }, 5*time.Second).Should(Equal([]string{"12"}))
		kill(t, pid, syscall.SIGINT)
		Eventually(func() []string { return lines(file) }, 5*time.Second).Should(Equal([]string{"12", "3"}))
		kill(t, pid, syscall.SIGTERM)
		Expect(wait(t, cmd)).To(Equal(0))
	})

	it("does not lose a signal that arrives before the program has started", func() {
		// strace holds the child's execve for 1.5 s: the init has registered
		// its handlers, the program does not run yet. The SIGUSR1 sent then
		// must reach sleep, whose default action for it is to die.
		cmd := exec.Command("strace", "-f", "-o", "/dev/null", "-e", "trace=execve",
			"-e", "inject=execve:delay_enter=1500000", initBin, "--", "sleep", "10") // native only: strace cannot see through qemu
		Expect(cmd.Start()).To(Succeed())
		defer cmd.Process.Kill()
		// strace forks short-lived children of its own at start (to probe
		// what ptrace can do): the init is the child that runs as the init.
		var pid int
		Eventually(func() uint64 {
			pid = childOf(cmd.Process.Pid)
			if pid == 0 || comm(pid) != initComm {
				return 0
			}
			return caughtSignals(pid) & (1 << (10 - 1))
		}, 5*time.Second, 10*time.Millisecond).ShouldNot(BeZero(), "the init registered SIGUSR1")
		Eventually(func() int { return childOf(pid) }, 5*time.Second, 10*time.Millisecond).ShouldNot(BeZero())
		child := childOf(pid)
		Expect(comm(child)).To(Equal(initComm), "the child has not exec'd sleep yet")
		start := time.Now()
		kill(t, pid, syscall.SIGUSR1)
		Expect(wait(t, cmd)).To(Equal(128 + 10))
		Expect(time.Since(start)).To(BeNumerically("<", 5*time.Second))
	})

	it("forwards SIGTERM and lets a program that ignores it keep running", func() {
		cmd, stderr, pid := startPID1(t, []string{"BPL_INIT_LOG_LEVEL=debug"}, "sh", "-c", "trap '' TERM; sleep 1.5; exit 7")
		time.Sleep(300 * time.Millisecond)
		start := time.Now()
		kill(t, pid, syscall.SIGTERM)
		Expect(wait(t, cmd)).To(Equal(7))
		Expect(time.Since(start)).To(BeNumerically(">", 800*time.Millisecond))
		Expect(stderr.String()).To(ContainSubstring("[init] forwarded SIGTERM to process group"))
	})
}

package main_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

// asUser1000 runs the init as uid 1000, like the demo image's app user.
var asUser1000 = []string{"setpriv", "--reuid=1000", "--regid=1000", "--clear-groups"}

// ignoresTerm is a root process that ignores SIGTERM, as a debugging
// session's `docker exec -u 0` leaves it behind.
const ignoresTerm = `sh -c "trap '' TERM; while true; do sleep 1; done" >/dev/null 2>&1 & exit 0`

// shutdownMargin is how much longer than the grace period the init may take
// to exit after its program (1.5 s, see docs/how-it-works.md), plus slack for a loaded
// machine.
const shutdownMargin = 1500*time.Millisecond + time.Second

func testLeftovers(t *testing.T, context spec.G, it spec.S) {
	var (
		Expect     = NewWithT(t).Expect
		Eventually = NewWithT(t).Eventually
	)

	it.Before(func() {
		Expect(setupErr).NotTo(HaveOccurred())
	})

	// startWithRootLeftover starts program as uid 1000 under the init as PID 1,
	// then leaves a root shell that ignores SIGTERM in the namespace, as a
	// debugging session's docker exec -u 0 does, and returns the app's pid.
	startWithRootLeftover := func(env []string, program ...string) (*exec.Cmd, *syncBuffer, int) {
		cmd, stderr, pid := startPID1Via(t, asUser1000, env, program...)
		Eventually(func() int { return childOf(pid) }, 5*time.Second, 10*time.Millisecond).ShouldNot(BeZero())
		app := childOf(pid)
		Eventually(func() string { return comm(app) }, 5*time.Second, 10*time.Millisecond).Should(Equal("sleep"))

		out, err := exec.Command("nsenter", "--target", strconv.Itoa(pid), "--pid", "--mount", "--", "sh", "-c", ignoresTerm).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		Eventually(func() []int { return children(pid) }, 5*time.Second, 10*time.Millisecond).Should(HaveLen(2), "the root shell is reparented to the init")
		return cmd, stderr, app
	}

	it("exits at once when all that remains is a root process it may not signal, as PID 1", func() {
		// The scenario: the app runs as uid 1000, a root shell is
		// left behind by a docker exec -u 0, the app is sent SIGTERM. The
		// init can tell the shell nothing, so it does not wait the grace
		// period: without the init the kernel would end the shell at once.
		cmd, stderr, app := startWithRootLeftover([]string{"BPL_INIT_GRACE_PERIOD=5s", "BPL_INIT_LOG_LEVEL=info"}, "sleep", "60")
		kill(t, app, syscall.SIGTERM)
		code, elapsed := waitAtMost(t, cmd, 20*time.Second)
		Expect(code).To(Equal(128+15), stderr.String())
		Expect(elapsed).To(BeNumerically("<", 2500*time.Millisecond), "far less than the 5 s grace period:\n"+stderr.String())
		Expect(stderr.String()).To(MatchRegexp(`\[init\] exiting with [1-9]\d* processes left: [1-9]\d* the init may not signal \(EPERM: another user's\), 0 still there after SIGKILL; the kernel kills them when the init exits\n`))
		Expect(stderr.String()).NotTo(ContainSubstring("waiting up to"))
		Expect(strings.Count(stderr.String(), "exiting with")).To(Equal(1))
	})

	it("stops waiting as soon as only a root process it may not signal remains, as PID 1", func() {
		// Beside the root shell, a process of the app's user that takes
		// 0.5 s to stop after SIGTERM (a docker exec session on its way
		// out is one): the init waits for it, not for the root shell.
		program := []string{"sh", "-c", `sh -c "trap 'sleep 0.5; exit 0' TERM; while true; do sleep 0.1; done" & exec sleep 60`}
		cmd, stderr, app := startWithRootLeftover([]string{"BPL_INIT_GRACE_PERIOD=5s", "BPL_INIT_LOG_LEVEL=info"}, program...)
		kill(t, app, syscall.SIGTERM)
		code, elapsed := waitAtMost(t, cmd, 20*time.Second)
		Expect(code).To(Equal(128+15), stderr.String())
		Expect(stderr.String()).To(ContainSubstring("waiting up to 5s"))
		Expect(elapsed).To(BeNumerically(">=", 400*time.Millisecond), "the app's user's process had its time:\n"+stderr.String())
		Expect(elapsed).To(BeNumerically("<", 3*time.Second), "far less than the 5 s grace period:\n"+stderr.String())
		Expect(stderr.String()).NotTo(ContainSubstring("sent SIGKILL"), "no SIGKILL sweep for what it may not signal")
		Expect(stderr.String()).To(MatchRegexp(`\[init\] exiting with [1-9]\d* processes left: [1-9]\d* the init may not signal \(EPERM: another user's\), 0 still there after SIGKILL; the kernel kills them when the init exits\n`))
	})

	it("stops within the grace period and the margin when a root process it may not signal remains beside one that ignores SIGTERM, as PID 1", func() {
		// The app leaves a process of its own user that ignores SIGTERM:
		// that one gets the grace period, then SIGKILL; the root shell is
		// left to the kernel.
		program := []string{"sh", "-c", `sh -c "trap '' TERM; while true; do sleep 1; done" & exec sleep 60`}
		cmd, stderr, app := startWithRootLeftover([]string{"BPL_INIT_GRACE_PERIOD=2s", "BPL_INIT_LOG_LEVEL=info"}, program...)
		kill(t, app, syscall.SIGTERM)
		code, elapsed := waitAtMost(t, cmd, 20*time.Second)
		Expect(code).To(Equal(128+15), stderr.String())
		Expect(elapsed).To(BeNumerically(">=", 2*time.Second), "the app's leftover had the grace period")
		Expect(elapsed).To(BeNumerically("<", 2*time.Second+shutdownMargin), stderr.String())
		Expect(stderr.String()).To(MatchRegexp(`\[init\] exiting with [1-9]\d* processes left: [1-9]\d* the init may not signal \(EPERM: another user's\), 0 still there after SIGKILL; the kernel kills them when the init exits\n`))
		Expect(strings.Count(stderr.String(), "SIGKILL")).To(Equal(2), "one line for the sweep, one for what is left:\n"+stderr.String())
		Expect(strings.Count(stderr.String(), "exiting with")).To(Equal(1))
	})

	it("exits at once when all that remains is a root process it may not signal, as a child subreaper", func() {
		// A setuid-root copy of the helper puts a root process into the
		// subtree of the init, which runs as uid 1000. The namespace's PID 1
		// is a root shell: it inherits what the init leaves.
		suid := filepath.Join(filepath.Dir(helperBin), "suid-helper") // in a directory uid 1000 may enter
		copyFile(t, helperBin, suid)
		Expect(os.Chmod(suid, 0o755|os.ModeSetuid)).To(Succeed())

		program := `"$0" root sh -c "trap '' TERM; while true; do sleep 1; done" >/dev/null & sleep 0.3; exit 3`
		argv := append(append(append([]string{"unshare", "--pid", "--fork", "--mount-proc", "--kill-child", "sh", "-c", `"$@"; exit $?`, "sh"},
			asUser1000...), initArgv()...), "sh", "-c", program, suid)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "BPL_INIT_GRACE_PERIOD=5s", "BPL_INIT_LOG_LEVEL=info")
		var stderr syncBuffer
		cmd.Stderr = &stderr
		Expect(cmd.Start()).To(Succeed())
		code, elapsed := waitAtMost(t, cmd, 20*time.Second)
		Expect(code).To(Equal(3), stderr.String())
		Expect(stderr.String()).To(ContainSubstring("(init is a child subreaper)"))
		Expect(elapsed).To(BeNumerically("<", 2500*time.Millisecond), "far less than the 5 s grace period:\n"+stderr.String())
		Expect(stderr.String()).NotTo(ContainSubstring("waiting up to"))
		Expect(stderr.String()).To(MatchRegexp(`\[init\] exiting with [1-9]\d* processes left: [1-9]\d* the init may not signal \(EPERM: another user's\), 0 still there after SIGKILL; leaving them to the reaper above the init\n`))
		Expect(strings.Count(stderr.String(), "exiting with")).To(Equal(1))
	})
}

func copyFile(t *testing.T, from, to string) {
	g := NewWithT(t)
	in, err := os.Open(from)
	g.Expect(err).NotTo(HaveOccurred())
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = io.Copy(out, in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.Close()).To(Succeed())
}

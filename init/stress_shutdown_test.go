package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// The stress suite's shutdown under a fork bomb (issue 12, item 6): the
// program leaves a descendant that ignores SIGTERM and forks in a loop, as
// every one of its children does, inside a pids cgroup that the bomb keeps
// full. The init must stop within its promise, the grace period plus 1.5 s
// after the program, and exit with the program's code, in every run. The
// time each takes, from the program's exit to the end of its PID namespace
// (what stops a container), is printed beside no init and tini-static. The
// end of the namespace comes after the init's exit by the time the kernel
// takes to end what is left there, the same teardown that ends the
// namespace when the program is PID 1 alone: the bound of each run is the
// promise plus the slowest no-init run of the same test. (As a
// subreaper the init does not hold the bound under a fork bomb: README,
// Limits.)

// bombPids is the pids limit of the fork bomb's cgroup: twice the 300,
// so that the bomb takes the CPUs from the init more surely on any machine.
const bombPids = 600

// bombGrace is BPL_INIT_GRACE_PERIOD for the fork bomb runs.
const bombGrace = 2 * time.Second

// bombRuns is how many times each peer runs.
const bombRuns = 3

// shutdownPromise is how much longer than the grace period the init may
// take to exit after its program (see the README).
const shutdownPromise = 1500 * time.Millisecond

func TestStressShutdown(t *testing.T) {
	g := NewWithT(t)
	g.Expect(setupErr).NotTo(HaveOccurred())
	tini, err := exec.LookPath("tini-static")
	g.Expect(err).NotTo(HaveOccurred(), "the stress suite compares with tini-static (scripts/setup.sh installs Debian's tini)")

	pid1 := []string{"unshare", "--pid", "--fork", "--mount-proc", "--kill-child"}
	peers := []struct {
		name  string
		argv  []string
		env   []string
		bound time.Duration // 0: a peer, not held to a bound
	}{
		{"no init", pid1, nil, 0},
		{"tini-static", append(append([]string{}, pid1...), tini, "--"), nil, 0},
		{"init, grace 0", append(append([]string{}, pid1...), initArgv()...), []string{"BPL_INIT_GRACE_PERIOD=0"}, shutdownPromise},
		{"init, grace 2s", append(append([]string{}, pid1...), initArgv()...), []string{"BPL_INIT_GRACE_PERIOD=" + bombGrace.String()},
			bombGrace + shutdownPromise},
	}
	var table []string
	var teardown time.Duration // the slowest no-init run: the kernel ending the bomb
	for _, peer := range peers {
		row := fmt.Sprintf("| %-28s |", peer.name)
		for range bombRuns {
			r := runForkBomb(t, peer.argv, peer.env)
			row += fmt.Sprintf(" %5.2f s (exit %d) |", r.after.Seconds(), r.code)
			g.Expect(r.refused).To(BeNumerically(">", 0), "%s: the fork bomb never reached the pids limit", peer.name)
			if peer.name == "no init" {
				teardown = max(teardown, r.after)
			}
			if peer.bound == 0 {
				continue
			}
			bound := peer.bound + teardown
			g.Expect(r.code).To(Equal(7), "%s: the program's exit code:\n%s", peer.name, r.stderr)
			g.Expect(r.after).To(BeNumerically("<=", bound), "%s: stopped %.2f s after the program, promised %.2f s + the kernel's %.2f s:\n%s",
				peer.name, r.after.Seconds(), peer.bound.Seconds(), teardown.Seconds(), r.stderr)
		}
		table = append(table, row)
	}
	t.Logf("shutdown under a fork bomb (pids.max %d, a descendant ignoring SIGTERM), from the program's exit "+
		"to the end of the PID namespace; the init is held to the grace period + %.1f s + the slowest no-init run (%.2f s, "+
		"the kernel ending what is left):\n%s",
		bombPids, shutdownPromise.Seconds(), teardown.Seconds(), strings.Join(table, "\n"))
}

// bombRun is how a fork bomb run ended.
type bombRun struct {
	code    int
	after   time.Duration // from the program's exit to the end of the run
	refused int           // forks the pids limit refused
	stderr  string
}

// runForkBomb runs argv (what starts the program), then a program that
// starts the fork bomb, exits 7 after 0.5 s and notes when, in a pids cgroup
// of its own.
func runForkBomb(t *testing.T, argv, env []string) bombRun {
	t.Helper()
	g := NewWithT(t)
	cgroup := newPidsCgroup(t, bombPids)
	exited := filepath.Join(t.TempDir(), "exited")
	// Only builtins after the bomb: a fork of the program could fail.
	program := `sleep 0.5 & s=$!; "$HELPER" forkbomb & wait $s; echo $EPOCHREALTIME > "$EXITED"; exit 7`
	all := append(append(cgroup.Prefix(), argv...), "bash", "-c", program)
	cmd := exec.Command(all[0], all[1:]...)
	cmd.Env = append(append(os.Environ(), "HELPER="+helperBin, "EXITED="+exited), env...)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	g.Expect(cmd.Start()).To(Succeed())
	code, _ := waitAtMost(t, cmd, 20*time.Second)
	end := time.Now()
	stamp := strings.TrimSpace(readFile(exited))
	seconds, err := strconv.ParseFloat(stamp, 64)
	g.Expect(err).NotTo(HaveOccurred(), "the program noted no exit time (%q):\n%s", stamp, stderr.String())
	return bombRun{
		code:    code,
		after:   end.Sub(time.Unix(0, int64(seconds*1e9))),
		refused: cgroup.Refused(),
		stderr:  stderr.String(),
	}
}

package integration_test

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

// leakFor is how long the zombie-leaking app runs under --pids-limit.
const leakFor = 8 * time.Second

// testZombies checks that orphans are reaped: the app's own and those of `docker exec`
// sessions (issue 4, items 3 and 7).
func testZombies(t *testing.T, context spec.G, it spec.S) {
	var (
		Expect     = NewWithT(t).Expect
		Eventually = NewWithT(t).Eventually
	)

	it("keeps a zombie-leaking app running under --pids-limit 64, which runs out of PIDs without it", func() {
		final := map[string]leakStatus{}
		errs := map[string][]string{}
		firstFailure := map[string]time.Duration{}
		for _, image := range []string{settings.Without, settings.With} {
			id := startContainer(t, "--pids-limit", "64", "--entrypoint", "worker", image)
			time.Sleep(leakFor)
			logs := docker(t, "logs", id)
			statuses := leakStatuses(logs)
			Expect(statuses).NotTo(BeEmpty(), logs)
			final[image] = statuses[len(statuses)-1]
			for i, s := range statuses {
				if s.Failed > 0 && firstFailure[image] == 0 {
					firstFailure[image] = time.Duration(i+1) * time.Second
				}
				if s.LastError != "" {
					errs[image] = append(errs[image], s.LastError)
				}
			}
		}
		without, with := final[settings.Without], final[settings.With]
		t.Logf("--pids-limit 64, a zombie every 20ms for %v:", leakFor)
		t.Logf("  without the buildpack: spawned=%d failed=%d zombies=%d first fork failure after ~%v last error %q",
			without.Spawned, without.Failed, without.Zombies, firstFailure[settings.Without], without.LastError)
		t.Logf("  with the buildpack:    spawned=%d failed=%d zombies=%d", with.Spawned, with.Failed, with.Zombies)

		Expect(without.Failed).To(BeNumerically(">", 0), "without the buildpack fork must fail")
		Expect(without.Zombies).To(BeNumerically(">=", 40), "without the buildpack zombies pile up to the limit")
		Expect(without.Spawned).To(BeNumerically("<", 64))
		Expect(strings.ToLower(strings.Join(errs[settings.Without], "\n"))).To(ContainSubstring("resource temporarily unavailable"))

		Expect(with.Failed).To(Equal(0), "with the buildpack no fork fails")
		Expect(with.Spawned).To(BeNumerically(">", 3*64), "with the buildpack it keeps spawning far past the limit")
		Expect(with.Zombies).To(BeNumerically("<=", 2), "with the buildpack zombies are reaped (one may be caught between exit and reap)")
	})

	it("reaps what a `docker exec` session leaves behind", func() {
		counts := map[string][2]int{}
		for _, image := range []string{settings.Without, settings.With} {
			id := startContainer(t, image)
			waitForLog(t, id, serving, 30*time.Second)

			// A shell that backgrounds a child and exits: the child is reparented to PID 1.
			docker(t, "exec", id, "sh", "-c", "sleep 1 & exit 0")
			time.Sleep(2500 * time.Millisecond)
			afterExit := zombies(containerProcesses(t, id))

			// A session killed from outside while its children run.
			docker(t, "exec", "-d", id, "sh", "-c", "sleep 1 & sleep 300; echo never")
			var session proc
			Eventually(func() bool {
				for _, p := range containerProcesses(t, id) {
					if strings.HasPrefix(p.Cmdline, "sh -c sleep 1 & sleep 300") {
						session = p
						return true
					}
				}
				return false
			}, 10*time.Second, 100*time.Millisecond).Should(BeTrue(), "the exec session starts")
			killInContainer(t, id, session.PID)
			time.Sleep(2500 * time.Millisecond)
			// Its sleep 300 is still running, reparented to PID 1; end it too.
			endOrphans(t, containerProcesses(t, id), "sleep 300", func(pid int) { killInContainer(t, id, pid) })
			time.Sleep(time.Second)
			afterKill := zombies(containerProcesses(t, id))
			counts[image] = [2]int{len(afterExit), len(afterKill)}
			t.Logf("%s: zombies after the exec'd shell exited: %v; after the killed session: %v", image, afterExit, afterKill)
		}
		expectSessionZombies(t, "docker exec", counts)
	})
}

// endOrphans checks that every process of procs running cmdline was reparented to PID 1, and
// kills it.
func endOrphans(t *testing.T, procs []proc, cmdline string, kill func(pid int)) {
	t.Helper()
	for _, p := range procs {
		if p.Cmdline == cmdline {
			NewWithT(t).Expect(p.PPID).To(Equal(1), "the orphan is reparented to PID 1: %v", p)
			kill(p.PID)
		}
	}
}

// expectSessionZombies logs and checks the zombies that exec sessions through via left, by
// image: after a shell that backgrounded a child exited, then after a killed session too.
func expectSessionZombies(t *testing.T, via string, counts map[string][2]int) {
	t.Helper()
	Expect := NewWithT(t).Expect
	t.Logf("zombies left by %s (backgrounded child, then killed session): without the buildpack %v, with %v",
		via, counts[settings.Without], counts[settings.With])
	Expect(counts[settings.Without][0]).To(BeNumerically(">=", 1), "without the buildpack the orphan stays a zombie (the check can fail)")
	Expect(counts[settings.With]).To(Equal([2]int{0, 0}), "with the buildpack no zombie remains")
}

// killInContainer sends SIGKILL to pid inside the container, as root. It names /bin/kill:
// a bare `kill` would find the image's `kill` process type in /cnb/process first on PATH.
func killInContainer(t *testing.T, id string, pid int) {
	t.Helper()
	out, err := exec.Command("docker", "exec", "-u", "0", id, "/bin/kill", "-9", strconv.Itoa(pid)).CombinedOutput()
	if err != nil {
		t.Fatalf("kill -9 %d in %s: %v: %s", pid, id, err, out)
	}
}

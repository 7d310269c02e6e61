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

// podmanLimits are passed to every podman run: runc cannot raise resource limits on these
// machines (it fails with "error setting rlimits for ready process: error setting rlimit type 7:
// operation not permitted"), and podman's defaults (nofile 1048576) are above the hard limits
// here, so the container asks for no more than the machine allows.
var podmanLimits = []string{"--ulimit", "nofile=20000:20000", "--ulimit", "nproc=16384:16384"}

// testPodman runs the wrapped image with a second engine, Debian's podman, after pulling it from
// the Docker daemon (issue 9).
func testPodman(t *testing.T, context spec.G, it spec.S) {
	var (
		Expect = NewWithT(t).Expect
		image  string
	)

	podman := func(args ...string) result {
		t.Helper()
		return run(t, 2*time.Minute, nil, "podman", args...)
	}
	mustPodman := func(args ...string) string {
		t.Helper()
		r := podman(args...)
		if r.ExitCode != 0 {
			t.Fatalf("podman %s: exit %d\n%s", strings.Join(args, " "), r.ExitCode, r.Output)
		}
		return strings.TrimSpace(r.Stdout)
	}
	start := func(args ...string) string {
		t.Helper()
		id := mustPodman(append(append([]string{"run", "-d"}, podmanLimits...), append(args, image)...)...)
		t.Cleanup(func() { _ = exec.Command("podman", "rm", "-f", "-t", "0", id).Run() })
		return id
	}
	// processes lists the container's processes as containerProcesses does for Docker.
	processes := func(id string) []proc {
		t.Helper()
		out := mustPodman("exec", id, "sh", "-c", `for d in /proc/[0-9]*; do echo "${d#/proc/} $(cut -d' ' -f4 $d/stat 2>/dev/null) $(tr '\0' ' ' <$d/cmdline 2>/dev/null)"; done`)
		var procs []proc
		for _, line := range strings.Split(out, "\n") {
			fields := strings.SplitN(line, " ", 3)
			if len(fields) < 3 {
				continue
			}
			pid, _ := strconv.Atoi(fields[0])
			ppid, _ := strconv.Atoi(fields[1])
			procs = append(procs, proc{PID: pid, PPID: ppid, Cmdline: strings.TrimSpace(fields[2])})
		}
		return procs
	}
	waitServing := func(id string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !serving.MatchString(podman("logs", id).Output) {
			if time.Now().After(deadline) {
				t.Fatalf("podman container %s does not serve within 30 s:\n%s", id, podman("logs", id).Output)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	stop := func(id string) (time.Duration, int) {
		t.Helper()
		r := podman("stop", "-t", strconv.Itoa(stopTimeout), id)
		Expect(r.ExitCode).To(Equal(0), r.Output)
		code, err := strconv.Atoi(mustPodman("inspect", "--format", "{{.State.ExitCode}}", id))
		Expect(err).NotTo(HaveOccurred())
		return r.Duration, code
	}

	it.Before(func() {
		if _, err := exec.LookPath("podman"); err != nil {
			t.Fatalf("podman is not on PATH: install Debian's podman (scripts/setup.sh does)")
		}
		pull := podman("pull", "-q", "docker-daemon:"+settings.With)
		Expect(pull.ExitCode).To(Equal(0), "podman pull docker-daemon:%s\n%s", settings.With, pull.Output)
		image = strings.TrimSpace(pull.Stdout)
		t.Logf("podman pull docker-daemon:%s: %v, image %.12s", settings.With, pull.Duration.Round(time.Millisecond), image)
		t.Cleanup(func() { _ = exec.Command("podman", "rmi", "-f", image).Run() })
	})

	it("runs the init as PID 1, reaps podman exec orphans, stops fast with the app's code", func() {
		id := start()
		waitServing(id)
		procs := processes(id)
		t.Logf("podman: %v", procs)
		Expect(pid1(t, procs).Cmdline).To(HavePrefix(initPath + " -- /workspace/bin/sample-app serve"))
		Expect(findProc(t, procs, "/workspace/bin/sample-app serve").PPID).To(Equal(1))

		orphan := mustPodman("exec", id, "sh", "-c", "sleep 1 >/dev/null 2>&1 & echo $!")
		Expect(orphan).To(MatchRegexp(`^\d+$`))
		ppid := func() int {
			for _, p := range processes(id) {
				if strconv.Itoa(p.PID) == orphan {
					return p.PPID
				}
			}
			return 0
		}
		Expect(ppid()).To(Equal(1), "the podman exec orphan is reparented to PID 1")
		NewWithT(t).Eventually(ppid, 5*time.Second, 100*time.Millisecond).Should(Equal(0), "and reaped once it exits")

		took, code := stop(id)
		t.Logf("podman stop -t %d: %v, exit %d", stopTimeout, took.Round(time.Millisecond), code)
		Expect(code).To(Equal(0))
		Expect(podman("logs", id).Output).To(ContainSubstring("serve: got terminated, exiting"))
		Expect(took).To(BeNumerically("<", 3*time.Second))
	})

	it("runs under podman run --init: catatonit is PID 1, ours its child", func() {
		id := start("--init")
		waitServing(id)
		procs := processes(id)
		t.Logf("podman run --init: %v", procs)
		Expect(pid1(t, procs).Cmdline).To(HavePrefix("/run/podman-init -- "), "podman's catatonit is PID 1")
		ours := findProc(t, procs, initPath+" -- /workspace/bin/sample-app serve")
		Expect(ours.PPID).To(Equal(1))
		Expect(findProc(t, procs, "/workspace/bin/sample-app serve").PPID).To(Equal(ours.PID))

		took, code := stop(id)
		t.Logf("podman stop -t %d under --init: %v, exit %d", stopTimeout, took.Round(time.Millisecond), code)
		Expect(code).To(Equal(0))
		Expect(took).To(BeNumerically("<", 3*time.Second))
	})
}

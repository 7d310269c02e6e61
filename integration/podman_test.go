package integration_test

import (
	"os/exec"
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
		waitForEngineLog(t, "podman", id, serving, 30*time.Second)
		procs := engineProcesses(t, "podman", id)
		t.Logf("podman: %v", procs)
		Expect(pid1(t, procs).Cmdline).To(HavePrefix(initPath + " -- /workspace/bin/sample-app serve"))
		Expect(findProc(t, procs, "/workspace/bin/sample-app serve").PPID).To(Equal(1))

		expectOrphanReaped(t, "podman", id)

		took, code := stopContainer(t, "podman", id)
		t.Logf("podman stop -t %d: %v, exit %d", stopTimeout, took.Round(time.Millisecond), code)
		Expect(code).To(Equal(0))
		Expect(podman("logs", id).Output).To(ContainSubstring("serve: got terminated, exiting"))
		Expect(took).To(BeNumerically("<", 3*time.Second))
	})

	it("runs under podman run --init: catatonit is PID 1, ours its child", func() {
		id := start("--init")
		waitForEngineLog(t, "podman", id, serving, 30*time.Second)
		procs := engineProcesses(t, "podman", id)
		t.Logf("podman run --init: %v", procs)
		Expect(pid1(t, procs).Cmdline).To(HavePrefix("/run/podman-init -- "), "podman's catatonit is PID 1")
		ours := findProc(t, procs, initPath+" -- /workspace/bin/sample-app serve")
		Expect(ours.PPID).To(Equal(1))
		Expect(findProc(t, procs, "/workspace/bin/sample-app serve").PPID).To(Equal(ours.PID))

		took, code := stopContainer(t, "podman", id)
		t.Logf("podman stop -t %d under --init: %v, exit %d", stopTimeout, took.Round(time.Millisecond), code)
		Expect(code).To(Equal(0))
		Expect(took).To(BeNumerically("<", 3*time.Second))
	})
}

package integration_test

import (
	"bytes"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

const (
	// leftoverGrace is BPL_INIT_GRACE_PERIOD in the scenario.
	leftoverGrace = 2 * time.Second
	// dockerSlack is what Docker adds around the init's own shutdown here: the docker exec that
	// sends the signal, and the container's teardown.
	dockerSlack = 1500 * time.Millisecond
)

// unsignalled is the init's info line naming how many processes it could not signal, and why.
var unsignalled = regexp.MustCompile(`\[init\] exiting with \d+ processes left: ([1-9]\d*) the init may not signal \(EPERM: another user's\)[^\n]*the kernel kills them when the init exits`)

// testLeftovers runs the scenario of issue 9: a root-owned leftover that ignores SIGTERM, which
// the init (running as the image's user) cannot signal, must not keep the container running
// after the app exits.
func testLeftovers(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	// stopsAfterAppExits starts image, leaves a root process that ignores SIGTERM, sends the app
	// SIGTERM and returns how long the container ran on, its exit code and its log.
	stopsAfterAppExits := func(image string, env ...string) (time.Duration, int, string) {
		id := startContainer(t, append(env, image)...)
		waitForLog(t, id, serving, 30*time.Second)
		docker(t, "exec", "-u", "0", id, "sh", "-c", `sh -c "trap \"\" TERM; while true; do sleep 1; done" >/dev/null 2>&1 & exit 0`)
		procs := containerProcesses(t, id)
		leftover := findProc(t, procs, `sh -c trap "" TERM;`)
		Expect(docker(t, "exec", id, "grep", "^Uid:", "/proc/"+strconv.Itoa(leftover.PID)+"/status")).To(MatchRegexp(`^Uid:\s+0\s`), "the leftover is root's")
		app := findProc(t, procs, "/workspace/bin/sample-app serve")

		// docker wait, started before the signal, returns the exit code when the container stops.
		var waited bytes.Buffer
		wait := exec.Command("docker", "wait", id)
		wait.Stdout = &waited
		Expect(wait.Start()).To(Succeed())
		done := make(chan error, 1)
		go func() { done <- wait.Wait() }()
		start := time.Now()
		docker(t, "exec", id, "/bin/busybox", "kill", "-TERM", strconv.Itoa(app.PID))
		select {
		case err := <-done:
			Expect(err).NotTo(HaveOccurred())
		case <-time.After(20 * time.Second):
			_ = wait.Process.Kill()
			t.Fatalf("%s still runs 20 s after its app exited; log:\n%s", image, containerLogs(t, id))
		}
		took := time.Since(start)
		code, err := strconv.Atoi(strings.TrimSpace(waited.String()))
		Expect(err).NotTo(HaveOccurred(), "docker wait: %q", waited.String())
		return took, code, containerLogs(t, id)
	}

	it("stops as soon as without the init when all that remains is a root leftover that ignores SIGTERM", func() {
		took, code, logs := stopsAfterAppExits(settings.With, "-e", "BPL_INIT_LOG_LEVEL=info", "-e", "BPL_INIT_GRACE_PERIOD="+leftoverGrace.String())
		t.Logf("with the buildpack: the container stopped %v after the app's SIGTERM, exit %d; log:\n%s", took.Round(time.Millisecond), code, logs)
		without, withoutCode, _ := stopsAfterAppExits(settings.Without)
		t.Logf("without the buildpack: stopped %v after the app's SIGTERM, exit %d", without.Round(time.Millisecond), withoutCode)

		Expect(logs).To(ContainSubstring("serve: got terminated, exiting"))
		Expect(code).To(Equal(0), "the app's exit code")
		// The init stops waiting as soon as all that remains is what it may not signal (the docker
		// exec that sent the signal may still be on its way out when the init looks).
		Expect(took).To(BeNumerically("<", leftoverGrace), "no grace period for what the init cannot signal")
		Expect(unsignalled.FindAllString(logs, -1)).To(HaveLen(1), "the init says once how many it could not signal")
		Expect(strings.Count(logs, "sent SIGKILL")).To(Equal(0), "no SIGKILL sweep announced, let alone one every 100 ms")
		Expect(withoutCode).To(Equal(0))
		Expect(without).To(BeNumerically("<", dockerSlack), "without the init the kernel ends the namespace with its PID 1")
	})
}

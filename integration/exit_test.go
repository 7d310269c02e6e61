package integration_test

import (
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

// testExitCodes checks that `docker run` returns the app's exit code, 128+N when it was
// killed by signal N (issue 4, item 5).
func testExitCodes(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	it("returns the app's exit code, as without the buildpack", func() {
		for _, code := range []int{0, 1, 3, 42, 126, 127, 255} {
			var args []string
			if code != 3 { // 3 is the exit process's own default args
				args = []string{strconv.Itoa(code)}
			}
			without := dockerRun(t, append([]string{"--entrypoint", "exit", settings.Without}, args...)...)
			with := dockerRun(t, append([]string{"--entrypoint", "exit", settings.With}, args...)...)
			t.Logf("exit %d: without the buildpack %d, with %d", code, without.ExitCode, with.ExitCode)
			Expect(without.ExitCode).To(Equal(code))
			Expect(with.ExitCode).To(Equal(code))
		}
	})

	it("returns 128+N when the app is killed by signal N", func() {
		// Signals the Go runtime of the sample app does not turn into a crash dump (SIGABRT and
		// SIGQUIT make it print goroutines and exit 2).
		for _, sig := range []int{9, 15, 2, 1} {
			r := dockerRun(t, "--entrypoint", "kill", settings.With, strconv.Itoa(sig))
			t.Logf("app killed by signal %d: docker run exit %d", sig, r.ExitCode)
			Expect(r.ExitCode).To(Equal(128+sig), r.Output)
		}
		// Without the buildpack the app is PID 1, which the kernel protects from its own
		// signals: it survives and exits 1 after 5s.
		r := dockerRun(t, "--entrypoint", "kill", settings.Without, "9")
		t.Logf("without the buildpack, the app (PID 1) sending itself SIGKILL: exit %d: %q", r.ExitCode, r.Output)
		Expect(r.ExitCode).To(Equal(1))
	})
}

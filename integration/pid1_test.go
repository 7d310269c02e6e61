package integration_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

var serving = regexp.MustCompile(`serve: pid=\d+`)

// testPID1 checks who is PID 1 in the running container and that launch-time settings reach
// the init (issue 4, items 2 and 11).
func testPID1(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	it("runs the init as PID 1 with the app as its child", func() {
		id := startContainer(t, settings.With)
		waitForLog(t, id, serving, 30*time.Second)
		procs := containerProcesses(t, id)
		t.Logf("with the buildpack: %v", procs)

		first := pid1(t, procs)
		Expect(first.Cmdline).To(HavePrefix(initPath+" -- /workspace/bin/sample-app serve"), "PID 1 is the init")
		var app []proc
		for _, p := range procs {
			if p.PPID == 1 && strings.HasPrefix(p.Cmdline, "/workspace/bin/sample-app serve --name web") {
				app = append(app, p)
			}
		}
		Expect(app).To(HaveLen(1), "the app is a child of PID 1: %v", procs)

		// Without the buildpack the app itself is PID 1.
		id = startContainer(t, settings.Without)
		waitForLog(t, id, serving, 30*time.Second)
		procs = containerProcesses(t, id)
		t.Logf("without the buildpack: %v", procs)
		Expect(pid1(t, procs).Cmdline).To(HavePrefix("/workspace/bin/sample-app serve"))
	})

	it("logs reaping with BPL_INIT_LOG_LEVEL=debug", func() {
		id := startContainer(t, "-e", "BPL_INIT_LOG_LEVEL=debug", "--entrypoint", "worker", settings.With)
		logs := waitForLog(t, id, regexp.MustCompile(`(?i)reap`), 30*time.Second)
		var reapLines []string
		for _, line := range strings.Split(logs, "\n") {
			if strings.Contains(strings.ToLower(line), "reap") && len(reapLines) < 3 {
				reapLines = append(reapLines, line)
			}
		}
		t.Logf("debug log of the init (first lines about reaping): %q", reapLines)

		// And at the default level it says nothing about reaping.
		id = startContainer(t, "--entrypoint", "worker", settings.With)
		logs = waitForLog(t, id, leakLine, 30*time.Second)
		Expect(strings.ToLower(logs)).NotTo(ContainSubstring("reap"))
	})

	it("makes the app PID 1 again with BPL_INIT_ENABLED=false", func() {
		id := startContainer(t, "-e", "BPL_INIT_ENABLED=false", settings.With)
		waitForLog(t, id, serving, 30*time.Second)
		procs := containerProcesses(t, id)
		t.Logf("BPL_INIT_ENABLED=false: %v", procs)
		Expect(pid1(t, procs).Cmdline).To(Equal("/workspace/bin/sample-app serve --name web"))
	})

	it("refuses to start on a bad BPL_INIT_* value, naming it", func() {
		r := dockerRun(t, "-e", "BPL_INIT_SIGNAL_TARGET=everyone", settings.With)
		t.Logf("BPL_INIT_SIGNAL_TARGET=everyone: exit %d: %s", r.ExitCode, strings.TrimSpace(r.Output))
		Expect(r.ExitCode).To(Equal(2))
		Expect(r.Output).To(ContainSubstring("BPL_INIT_SIGNAL_TARGET"))
		Expect(r.Output).To(ContainSubstring("everyone"))
		Expect(r.Output).NotTo(ContainSubstring("serve:"), "nothing is started")
	})
}

package integration_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

// testPath checks that the init is not on the app's PATH: the launcher prepends every launch
// layer's bin/ to PATH, and the init lives in its layer's sbin/ (issue 9, defect 7).
func testPath(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	it("keeps the init layer off the app's PATH, so that `init` by name is not ours", func() {
		id := startContainer(t, settings.With)
		waitForLog(t, id, serving, 30*time.Second)
		app := findProc(t, containerProcesses(t, id), "/workspace/bin/sample-app serve")
		environ := docker(t, "exec", id, "cat", "/proc/"+strconv.Itoa(app.PID)+"/environ")
		var path string
		for _, v := range strings.Split(environ, "\x00") {
			if p, ok := strings.CutPrefix(v, "PATH="); ok {
				path = p
			}
		}
		t.Logf("the app's PATH: %s", path)
		Expect(path).NotTo(BeEmpty(), "the app has a PATH: %q", environ)
		initLayer := filepath.Dir(filepath.Dir(initPath))
		for _, dir := range filepath.SplitList(path) {
			Expect(dir).NotTo(HavePrefix(initLayer), "PATH has the init layer")
		}

		r := dockerExec(t, id, "test", "-x", initPath)
		Expect(r.ExitCode).To(Equal(0), "the init is at %s", initPath)
		// which walks PATH (busybox sh's `command -v` would name its own init applet).
		r = run(t, time.Minute, nil, "docker", "exec", "-e", "PATH="+path, id, "sh", "-c", "which init || echo 'not found'")
		t.Logf("which init, with the app's PATH: %s", strings.TrimSpace(r.Output))
		Expect(r.ExitCode).To(Equal(0), r.Output)
		Expect(r.Output).NotTo(ContainSubstring(initLayer))
	})
}

package integration_test

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

// stopTimeout is docker stop's grace period before SIGKILL.
const stopTimeout = 10

// testStop checks `docker stop` on an app behind a shell that does not forward SIGTERM
// (issue 4, item 4).
func testStop(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	it("stops a shell-wrapped app as soon as it handled SIGTERM; without the buildpack docker waits the full timeout", func() {
		took := map[string]time.Duration{}
		exit := map[string]string{}
		logs := map[string]string{}
		for _, image := range []string{settings.Without, settings.With} {
			id := startContainer(t, "--entrypoint", "shell-wrapped", image)
			waitForLog(t, id, serving, 30*time.Second)
			r := run(t, time.Minute, nil, "docker", "stop", "-t", strconv.Itoa(stopTimeout), id)
			Expect(r.ExitCode).To(Equal(0), r.Output)
			took[image] = r.Duration
			exit[image] = docker(t, "inspect", "--format", "{{.State.ExitCode}}", id)
			logs[image] = docker(t, "logs", id)
		}
		t.Logf("docker stop -t %d on a shell-wrapped app: without the buildpack %v (exit %s), with %v (exit %s)",
			stopTimeout, took[settings.Without].Round(time.Millisecond), exit[settings.Without],
			took[settings.With].Round(time.Millisecond), exit[settings.With])

		Expect(took[settings.Without]).To(BeNumerically(">=", 9*time.Second), "without: the shell as PID 1 ignores SIGTERM")
		Expect(exit[settings.Without]).To(Equal("137"), "without: killed by SIGKILL")
		Expect(logs[settings.Without]).NotTo(MatchRegexp(`serve: got`))

		// The init forwards SIGTERM to the whole process group: the app handles it and exits, the
		// shell (no trap) dies of it, and the init exits the way the shell did: 128+15.
		Expect(took[settings.With]).To(BeNumerically("<", 5*time.Second), "with: SIGTERM reaches the app")
		Expect(logs[settings.With]).To(MatchRegexp(regexp.QuoteMeta("serve: got terminated, exiting")))
		Expect(exit[settings.With]).To(Equal("143"), "the shell's death by SIGTERM")

		// For scale: what docker stop costs here for an app that is PID 1 and handles SIGTERM.
		id := startContainer(t, settings.Without)
		waitForLog(t, id, serving, 30*time.Second)
		r := run(t, time.Minute, nil, "docker", "stop", "-t", "10", id)
		t.Logf("docker stop -t %d on the web app itself (PID 1, handles SIGTERM, no shell), for scale: %v", stopTimeout, r.Duration.Round(time.Millisecond))
	})
}

package integration_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

// testAudit runs bin/audit (scripts/build.sh) against the real builders and images of the
// suite, read from the Docker daemon (issue 7, item 5).
func testAudit(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	audit := func(args ...string) result {
		t.Helper()
		return run(t, time.Minute, nil, filepath.Join(settings.Root, "bin", "audit"), args...)
	}
	lines := func(r result) []string {
		return strings.Split(strings.TrimSpace(r.Stdout), "\n")
	}

	it("says which builders cover every image, whether app developers can opt out, and why each other one does not", func() {
		const optOut = "app developers can opt out with BP_INIT_ENABLED=false"
		type tc struct {
			builder  string
			exit     int
			expected []string
		}
		for _, c := range []tc{
			{builder: builderSystem, exit: 0, expected: []string{builderSystem + ": covered: [system.post] appends pid1-buildpacks/init@0.1.0 to every order group; lifecycle 0.21.11, Platform API 0.15; " + optOut}},
			{builder: builderSystemLocked, exit: 0, expected: []string{builderSystemLocked + ": covered: [system.post] appends pid1-buildpacks/init@0.1.0 to every order group; lifecycle 0.21.11, Platform API 0.15; " +
				"BP_INIT_ENABLED=false is ignored (/cnb/build-config/env/BP_INIT_ENABLED.override)"}},
			{builder: builderWith, exit: 0, expected: []string{builderWith + ": covered: pid1-buildpacks/init is the last buildpack of every order group (2); lifecycle 0.21.11, Platform API 0.15; " + optOut}},
			{builder: matrixBuilders[0].Builder, exit: 0, expected: []string{matrixBuilders[0].Builder + ": covered: pid1-buildpacks/init is the last buildpack of every order group (2); lifecycle 0.18.5, Platform API 0.12; " + optOut}},
			{builder: builderWithout, exit: 1, expected: []string{
				builderWithout + ": order group 1 (samples/legacy, samples/processes): pid1-buildpacks/init is not in it",
				builderWithout + ": order group 2 (samples/processes): pid1-buildpacks/init is not in it"}},
			{builder: builderSystem020, exit: 1, expected: []string{
				builderSystem020 + ": [system.post] lists pid1-buildpacks/init@0.1.0, but lifecycle 0.20.12 supports Platform API 0.14 at most: system buildpacks need Platform API 0.15 (lifecycle 0.21 or newer), and this lifecycle ignores them without a word",
				builderSystem020 + ": order group 1 (samples/legacy, samples/processes): pid1-buildpacks/init is not in it",
				builderSystem020 + ": order group 2 (samples/processes): pid1-buildpacks/init is not in it"}},
		} {
			r := audit("builder", c.builder)
			t.Logf("audit builder %s: exit %d\n%s", c.builder, r.ExitCode, r.Output)
			Expect(r.ExitCode).To(Equal(c.exit), r.Output)
			Expect(lines(r)).To(Equal(c.expected))
		}
	})

	it("says which images start every process type through an init", func() {
		r := audit("image", settings.With)
		Expect(r.ExitCode).To(Equal(0), r.Output)
		Expect(lines(r)).To(Equal([]string{settings.With + ": covered: every process type (8) starts through an init"}))

		r = audit("image", settings.Without)
		Expect(r.ExitCode).To(Equal(1), r.Output)
		Expect(lines(r)).To(HaveLen(8))
		Expect(lines(r)).To(ContainElement(settings.Without + ": process type web starts /workspace/bin/sample-app, not an init"))
		Expect(lines(r)).To(ContainElement(settings.Without + ": process type shell-wrapped starts sh, not an init"))

		// Built on the lifecycle 0.20.12 builder whose [system.post] the lifecycle ignores.
		image := "pid1-it/audit-lifecycle-020:latest"
		mustPackBuild(t, image, builderSystem020)
		r = audit("image", image)
		Expect(r.ExitCode).To(Equal(1), r.Output)
		Expect(lines(r)).To(HaveLen(8))

		image = "pid1-it/audit-web-only:latest"
		mustPackBuild(t, image, builderSystem, "--env", "BP_INIT_PROCESS_TYPES=web")
		r = audit("image", "--json", image)
		Expect(r.ExitCode).To(Equal(1), r.Output)
		var report struct {
			Covered   bool     `json:"covered"`
			Problems  []string `json:"problems"`
			Processes []struct {
				Type, Init string
			} `json:"processes"`
		}
		Expect(json.Unmarshal([]byte(r.Stdout), &report)).To(Succeed())
		Expect(report.Covered).To(BeFalse())
		Expect(report.Problems).To(HaveLen(7))
		inits := map[string]string{}
		for _, p := range report.Processes {
			inits[p.Type] = p.Init
		}
		Expect(inits).To(HaveKeyWithValue("web", initBuildpackID))
		Expect(inits).To(HaveKeyWithValue("worker", ""))
	})

	it("exits 2 with one clear line on bad input", func() {
		type tc struct {
			args     []string
			expected string
		}
		for _, c := range []tc{
			{args: []string{"builder", "pid1-it/no-such-builder:latest"},
				expected: "audit builder: unable to read image pid1-it/no-such-builder:latest from the Docker daemon: "},
			{args: []string{"builder", settings.With},
				expected: "audit builder: " + settings.With + ": not a builder: it has no label io.buildpacks.builder.metadata"},
			{args: []string{"image", builderWith},
				expected: "audit image: " + builderWith + ": not an app image built with buildpacks: it has no label io.buildpacks.build.metadata"},
			{args: []string{"image", "pid1-buildpacks/run:busybox"},
				expected: "audit image: pid1-buildpacks/run:busybox: not an app image built with buildpacks: it has no label io.buildpacks.build.metadata"},
			{args: []string{"image", "Not A Reference"}, expected: `audit image: invalid image reference "Not A Reference"`},
			{args: []string{"builder", "--registry", "127.0.0.1:1/pid1-it/nothing:latest"},
				expected: "audit builder: unable to read image 127.0.0.1:1/pid1-it/nothing:latest from its registry: "},
		} {
			r := audit(c.args...)
			t.Logf("audit %s: exit %d: %s", strings.Join(c.args, " "), r.ExitCode, strings.TrimSpace(r.Output))
			Expect(r.ExitCode).To(Equal(2), r.Output)
			Expect(r.Stdout).To(BeEmpty())
			Expect(r.Output).To(HavePrefix(c.expected))
			Expect(strings.Count(strings.TrimSpace(r.Output), "\n")).To(Equal(0), "one line: %q", r.Output)
		}
	})
}

package integration_test

import (
	"encoding/json"
	"os"
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
		const ignored = ": [system.post] is ignored below Platform API 0.15: kpack, Tekton, pack < 0.40; list pid1-buildpacks/init last in every order group too"
		for _, c := range []tc{
			{builder: builderSystem, exit: 1, expected: []string{builderSystem + ignored,
				builderSystem + ": Platform API 0.7 to 0.14: order group 1 (samples/legacy, samples/processes): pid1-buildpacks/init is not in it",
				builderSystem + ": Platform API 0.7 to 0.14: order group 2 (samples/processes): pid1-buildpacks/init is not in it"}},
			{builder: builderWith, exit: 0, expected: []string{builderWith + ": covered: on Platform API 0.7 to 0.15 of lifecycle 0.21.11: pid1-buildpacks/init is the last buildpack of every order group (2); " + optOut}},
			{builder: matrixBuilders[0].Builder, exit: 0, expected: []string{matrixBuilders[0].Builder + ": covered: on Platform API 0.7 to 0.12 of lifecycle 0.18.5: pid1-buildpacks/init is the last buildpack of every order group (2); " + optOut}},
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

	it("judges one Platform API with --platform-api, and gives the verdict per Platform API in --json", func() {
		type tc struct {
			args     []string
			exit     int
			expected []string
		}
		for _, c := range []tc{
			// kpack negotiates Platform API 0.9 at most.
			{args: []string{"--platform-api", "0.9", builderSystem}, exit: 1, expected: []string{
				builderSystem + ": [system.post] is ignored below Platform API 0.15: kpack, Tekton, pack < 0.40; list pid1-buildpacks/init last in every order group too",
				builderSystem + ": Platform API 0.9: order group 1 (samples/legacy, samples/processes): pid1-buildpacks/init is not in it",
				builderSystem + ": Platform API 0.9: order group 2 (samples/processes): pid1-buildpacks/init is not in it"}},
			{args: []string{"--platform-api", "0.9", builderWith}, exit: 0, expected: []string{
				builderWith + ": covered: on Platform API 0.9 of lifecycle 0.21.11: pid1-buildpacks/init is the last buildpack of every order group (2); app developers can opt out with BP_INIT_ENABLED=false"}},
			{args: []string{"--platform-api", "0.15", builderSystemLocked}, exit: 0, expected: []string{
				builderSystemLocked + ": covered: on Platform API 0.15 of lifecycle 0.21.11: [system.post] appends pid1-buildpacks/init@0.1.0 to every order group; BP_INIT_ENABLED=false is ignored (/cnb/build-config/env/BP_INIT_ENABLED.override)"}},
		} {
			r := audit(append([]string{"builder"}, c.args...)...)
			t.Logf("audit builder %s: exit %d\n%s", strings.Join(c.args, " "), r.ExitCode, r.Output)
			Expect(r.ExitCode).To(Equal(c.exit), r.Output)
			Expect(lines(r)).To(Equal(c.expected))
		}

		r := audit("builder", "--json", builderSystem)
		Expect(r.ExitCode).To(Equal(1), r.Output)
		var report struct {
			Platforms []struct {
				PlatformAPI string `json:"platformAPI"`
				Covered     bool   `json:"covered"`
			} `json:"platforms"`
		}
		Expect(json.Unmarshal([]byte(r.Stdout), &report)).To(Succeed())
		verdicts := map[string]bool{}
		for _, p := range report.Platforms {
			verdicts[p.PlatformAPI] = p.Covered
		}
		Expect(verdicts).To(Equal(map[string]bool{"0.7": false, "0.8": false, "0.9": false, "0.10": false, "0.11": false,
			"0.12": false, "0.13": false, "0.14": false, "0.15": true}))
	})

	// derive builds image FROM base with the Dockerfile lines and the files given.
	derive := func(image, base string, files map[string]string, lines ...string) {
		t.Helper()
		dir := t.TempDir()
		for name, content := range files {
			Expect(os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)).To(Succeed())
		}
		dockerfile := "FROM " + base + "\n" + strings.Join(lines, "\n") + "\n"
		Expect(os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(dockerfile), 0o644)).To(Succeed())
		docker(t, "build", "-q", "-t", image, dir)
		t.Cleanup(func() { run(t, time.Minute, nil, "docker", "rmi", "-f", image) })
	}

	it("reads the builder's files, which the lifecycle reads, not only its labels", func() {
		type tc struct {
			name     string
			builder  string
			base     string
			files    map[string]string
			lines    []string
			exit     int
			expected []string
		}
		for _, c := range []tc{
			{name: "BP_INIT_ENABLED.append=false", builder: "pid1-it/audit-builder-append:latest", base: builderWith,
				files: map[string]string{"BP_INIT_ENABLED.append": "false"}, lines: []string{"COPY BP_INIT_ENABLED.append /cnb/build-config/env/"},
				exit: 1, expected: []string{`: /cnb/build-config/env/BP_INIT_ENABLED.append sets BP_INIT_ENABLED="false" unless the app developer sets it: images are not wrapped by default`}},
			{name: "BP_INIT_ENABLED. (an empty suffix: the lifecycle's prepend-path)", builder: "pid1-it/audit-builder-dot:latest", base: builderWith,
				files: map[string]string{"BP_INIT_ENABLED.": "false"}, lines: []string{"COPY BP_INIT_ENABLED. /cnb/build-config/env/"},
				exit: 1, expected: []string{`: /cnb/build-config/env/BP_INIT_ENABLED. sets BP_INIT_ENABLED="false" unless the app developer sets it: images are not wrapped by default`}},
			{name: "an override of BP_INIT_PROCESS_TYPES", builder: "pid1-it/audit-builder-types:latest", base: builderWith,
				files: map[string]string{"BP_INIT_PROCESS_TYPES.override": "none"}, lines: []string{"COPY BP_INIT_PROCESS_TYPES.override /cnb/build-config/env/"},
				exit: 1, expected: []string{`: /cnb/build-config/env/BP_INIT_PROCESS_TYPES.override sets BP_INIT_PROCESS_TYPES="none": only process type none is wrapped, every other process type starts without the init`}},
			{name: "the lock removed in a later layer (a whiteout)", builder: "pid1-it/audit-builder-unlocked:latest", base: builderSystemLocked,
				lines: []string{"USER root", "RUN rm /cnb/build-config/env/BP_INIT_ENABLED.override"}, exit: 1, expected: []string{
					": [system.post] is ignored below Platform API 0.15: kpack, Tekton, pack < 0.40; list pid1-buildpacks/init last in every order group too",
					": Platform API 0.7 to 0.14: order group 1 (samples/legacy, samples/processes): pid1-buildpacks/init is not in it",
					": Platform API 0.7 to 0.14: order group 2 (samples/processes): pid1-buildpacks/init is not in it"}},
			{name: "/cnb/order.toml without the init, under a label with it", builder: "pid1-it/audit-builder-order:latest", base: builderWith,
				files: map[string]string{"order.toml": "[[order]]\n  [[order.group]]\n    id = \"samples/processes\"\n    version = \"0.0.1\"\n"},
				lines: []string{"COPY order.toml /cnb/order.toml"}, exit: 1, expected: []string{
					": order group 1 (samples/processes): pid1-buildpacks/init is not in it",
					": warning: label io.buildpacks.buildpack.order differs from /cnb/order.toml, which the lifecycle reads and this audit judges"}},
		} {
			derive(c.builder, c.base, c.files, c.lines...)
			r := audit("builder", c.builder)
			t.Logf("%s: audit builder %s: exit %d\n%s", c.name, c.builder, r.ExitCode, r.Output)
			Expect(r.ExitCode).To(Equal(c.exit), r.Output)
			var expected []string
			for _, l := range c.expected {
				expected = append(expected, c.builder+l)
			}
			Expect(lines(r)).To(Equal(expected))
		}
		// The init buildpack's bin/build replaced by a layer on top: pack builds unwrapped images.
		replaced := "pid1-it/audit-builder-build-replaced:latest"
		derive(replaced, builderWith, map[string]string{"build": "#!/bin/sh\nexit 0\n"},
			"COPY build /cnb/buildpacks/pid1-buildpacks_init/0.1.0/bin/build")
		r := audit("builder", replaced)
		Expect(r.ExitCode).To(Equal(1), r.Output)
		Expect(lines(r)).To(ConsistOf(HavePrefix(replaced + ": pid1-buildpacks/init's /cnb/buildpacks/pid1-buildpacks_init/0.1.0/bin/build is written by layer ")))

		// Only at Platform API 0.15 does the whiteout show on its own: the lock is gone.
		r = audit("builder", "--platform-api", "0.15", "pid1-it/audit-builder-unlocked:latest")
		Expect(r.ExitCode).To(Equal(0), r.Output)
		Expect(r.Stdout).To(HaveSuffix("; app developers can opt out with BP_INIT_ENABLED=false\n"))

		// What the audit says is what the lifecycle does: pack builds unwrapped images.
		image := "pid1-it/audit-append-built:latest"
		mustPackBuild(t, image, "pid1-it/audit-builder-append:latest")
		t.Cleanup(func() { run(t, time.Minute, nil, "docker", "rmi", "-f", image) })
		r = audit("image", image)
		Expect(r.ExitCode).To(Equal(1), r.Output)
		Expect(lines(r)).To(ContainElement(image + ": process type web starts /workspace/bin/sample-app, not an init"))
	})

	it("reads the app image's files, which the launcher reads, not only its label", func() {
		// The launcher's metadata of the image without the init, in the image with it.
		id := docker(t, "create", settings.Without)
		defer docker(t, "rm", id)
		dir := t.TempDir()
		docker(t, "cp", id+":/layers/config/metadata.toml", filepath.Join(dir, "metadata.toml"))
		unwrapped, err := os.ReadFile(filepath.Join(dir, "metadata.toml"))
		Expect(err).NotTo(HaveOccurred())

		const layer = "/layers/pid1-buildpacks_init/init"
		type tc struct {
			name     string
			image    string
			files    map[string]string
			lines    []string
			expected []string
		}
		for _, c := range []tc{
			{name: "BPL_INIT_ENABLED=false in a layer's env.launch", image: "pid1-it/audit-image-env:latest",
				files: map[string]string{"BPL_INIT_ENABLED": "false"}, lines: []string{"COPY BPL_INIT_ENABLED " + layer + "/env.launch/web/"},
				expected: []string{": process type web: BPL_INIT_ENABLED=false (" + layer + "/env.launch/web/BPL_INIT_ENABLED): the init execs the program in its own place"}},
			{name: "a grace period the init refuses, in the image's environment", image: "pid1-it/audit-image-grace:latest",
				lines:    []string{"ENV BPL_INIT_GRACE_PERIOD=-3s"},
				expected: []string{`: process type echo: the init refuses to start: invalid BPL_INIT_GRACE_PERIOD="-3s": expected a non-negative Go duration (10s, 1m30s, 500ms) or whole seconds (10) (BPL_INIT_GRACE_PERIOD from the image's environment)`}},
			{name: "an entrypoint that is not the launcher", image: "pid1-it/audit-image-entrypoint:latest",
				lines:    []string{`ENTRYPOINT ["/workspace/bin/sample-app"]`},
				expected: []string{": the image's entrypoint is /workspace/bin/sample-app, not the launcher (/cnb/lifecycle/launcher or a /cnb/process/ link to it): no process type starts as the image says"}},
			{name: "a metadata.toml without the init under a label with it", image: "pid1-it/audit-image-metadata:latest",
				files: map[string]string{"metadata.toml": string(unwrapped)}, lines: []string{"COPY metadata.toml /layers/config/metadata.toml"},
				expected: []string{": process type web starts /workspace/bin/sample-app, not an init",
					": warning: label io.buildpacks.build.metadata differs from /layers/config/metadata.toml, which the launcher reads and this audit judges"}},
		} {
			derive(c.image, settings.With, c.files, c.lines...)
			r := audit("image", c.image)
			t.Logf("%s: audit image %s: exit %d\n%s", c.name, c.image, r.ExitCode, r.Output)
			Expect(r.ExitCode).To(Equal(1), r.Output)
			for _, l := range c.expected {
				Expect(lines(r)).To(ContainElement(c.image + l))
			}
		}

		// A layer on top that replaces the init or the launcher: the files are not those the
		// lifecycle exported (io.buildpacks.lifecycle.metadata names their layers).
		for _, c := range []tc{
			{name: "the init replaced by a script", image: "pid1-it/audit-image-init-script:latest",
				files: map[string]string{"init": "#!/bin/sh\nshift\nexec \"$@\"\n"}, lines: []string{"COPY init " + layer + "/sbin/init"},
				expected: []string{": the init " + layer + "/sbin/init is written by layer "}},
			{name: "the launcher replaced by a script", image: "pid1-it/audit-image-launcher-script:latest",
				files: map[string]string{"launcher": "#!/bin/sh\nexec /workspace/bin/sample-app serve\n"}, lines: []string{"COPY launcher /cnb/lifecycle/launcher"},
				expected: []string{": the launcher /cnb/lifecycle/launcher is written by layer "}},
		} {
			derive(c.image, settings.With, c.files, c.lines...)
			r := audit("image", c.image)
			t.Logf("%s: audit image %s: exit %d\n%s", c.name, c.image, r.ExitCode, r.Output)
			Expect(r.ExitCode).To(Equal(1), r.Output)
			Expect(lines(r)).To(ContainElement(HavePrefix(c.image + c.expected[0])))
		}

		// The launcher started as itself has no default process type: it runs the image's
		// command without the init.
		image := "pid1-it/audit-image-cmd:latest"
		derive(image, settings.With, nil, `ENTRYPOINT ["/cnb/lifecycle/launcher"]`, `CMD ["/workspace/bin/sample-app", "echo"]`)
		r := audit("image", image)
		Expect(r.ExitCode).To(Equal(1), r.Output)
		Expect(lines(r)).To(Equal([]string{image + `: docker run starts ["/workspace/bin/sample-app" "echo"]: the launcher, started as /cnb/lifecycle/launcher, has no default process type and runs it without the init`}))
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

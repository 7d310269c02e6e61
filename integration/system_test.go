package integration_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

const (
	// builderSystem is examples/builder.toml: the init buildpack in [system.post], lifecycle
	// 0.21.11; builderSystemLocked adds examples/lock.toml; builderSystem020 is the same
	// builder on lifecycle 0.20.12 (scripts/builders.sh makes all three).
	builderSystem       = "pid1-buildpacks/builder:system"
	builderSystemLocked = "pid1-buildpacks/builder:system-locked"
	builderSystem020    = "pid1-buildpacks/builder:system-lifecycle-0.20.12"

	// disabledLine is what build says, in one line, with BP_INIT_ENABLED=false.
	disabledLine = "BP_INIT_ENABLED is false: no init contributed, every process type left as is"
	// missingSystemBuildpack is pack v0.40.0's refusal when the user's buildpacks do not
	// include the builder's required system buildpack.
	missingSystemBuildpack = "ERROR: failed to build: required system buildpack pid1-buildpacks/init@0.1.0 is not available"

	// initFirstWarning and initFirstError are what build says when samples/processes comes after
	// the init in the group: a warning, or an error on a builder that locks BP_INIT_ENABLED.
	initFirstWarning = "Warning: pid1-buildpacks/init is not the last buildpack of the group: process types of samples/processes will not be wrapped; list it last in every group"
	initFirstError   = "pid1-buildpacks/init must be the last buildpack of the group, but samples/processes come after it: their process types would start without the init, which this builder enforces (/cnb/build-config/env/BP_INIT_ENABLED.override); list pid1-buildpacks/init last"
)

// testSystemBuilder checks a builder that enforces the init with system buildpacks (issue 7):
// every group wrapped by a plain build, what app developers can do with --buildpack and
// project.toml, the opt-out and the builder owner's lock.
func testSystemBuilder(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	expectNoneWrapped := func(image string) {
		t.Helper()
		Expect(processesByType(t, image)).To(Equal(processesByType(t, settings.Without)))
		Expect(pid1Cmdline(t, image)).To(HavePrefix("/workspace/bin/sample-app serve"))
	}

	it("wraps every process type of each order group in a plain pack build", func() {
		// Group 1: samples/legacy and samples/processes (the default app has legacy-processes).
		image := "pid1-it/sys-group1:latest"
		r := mustPackBuild(t, image, builderSystem)
		expectEveryTypeWrapped(t, image, r.Output)
		Expect(buildpackIDs(t, image)).To(Equal([]string{"samples/legacy", "samples/processes", initBuildpackID}))
		before, after := processesByType(t, settings.Without), processesByType(t, image)
		Expect(after).To(HaveLen(len(before)))
		for typ, p := range before {
			Expect(after[typ].Command[:3]).To(Equal([]string{initPath, "--", firstOf(p)}), typ)
		}
		Expect(pid1Cmdline(t, image)).To(HavePrefix(initPath + " -- /workspace/bin/sample-app serve --name web"))

		// Group 2: samples/processes alone, which declares six process types.
		image = "pid1-it/sys-group2:latest"
		r = mustPackBuild(t, image, builderSystem, "--path", appProcessesDir())
		expectEveryTypeWrapped(t, image, r.Output)
		Expect(buildpackIDs(t, image)).To(Equal([]string{"samples/processes", initBuildpackID}))
		Expect(processesByType(t, image)).To(HaveLen(6))
		Expect(pid1Cmdline(t, image)).To(HavePrefix(initPath + " -- /workspace/bin/sample-app serve --name web"))
	})

	// pack v0.40.0 removes the system buildpacks from the ephemeral builder's label but keeps
	// the builder's /cnb/system.toml, which is what the lifecycle reads: the flag changes
	// nothing. Found here; the opt-out that works is BP_INIT_ENABLED=false.
	it("still wraps with --disable-system-buildpacks (pack v0.40.0 keeps /cnb/system.toml)", func() {
		image := "pid1-it/sys-disable-flag:latest"
		r := mustPackBuild(t, image, builderSystem, "--disable-system-buildpacks", "-v")
		Expect(r.Output).To(ContainSubstring("Appending 1 system buildpack(s) to group"))
		expectEveryTypeWrapped(t, image, r.Output)
	})

	it("passes with BP_INIT_ENABLED=false and leaves every type unwrapped, saying so in one line without -v", func() {
		image := "pid1-it/sys-disabled:latest"
		r := mustPackBuild(t, image, builderSystem, "--env", "BP_INIT_ENABLED=false")
		Expect(strings.Count(r.Output, disabledLine)).To(Equal(1), r.Output)
		Expect(buildpackIDs(t, image)).To(ContainElement(initBuildpackID), "the init passed detection")
		expectNoneWrapped(image)
	})

	// Wherever the init is a required member of the group, not only as a system buildpack.
	it("passes with BP_INIT_ENABLED=false where the init is appended with --buildpack or project.toml", func() {
		initCNB := filepath.Join(settings.Root, "build", "init-buildpack.cnb")
		app := t.TempDir()
		Expect(os.CopyFS(app, os.DirFS(settings.App))).To(Succeed())
		Expect(os.WriteFile(filepath.Join(app, "project.toml"), []byte("[_]\nschema-version = \"0.2\"\n\n"+
			"[[io.buildpacks.post.group]]\n  uri = \""+initCNB+"\"\n"), 0o644)).To(Succeed())
		for way, args := range map[string][]string{
			"--buildpack": {"--buildpack", "from=builder", "--buildpack", initCNB},
			"project.toml [[io.buildpacks.post.group]]": {"--path", app},
		} {
			image := "pid1-it/sys-disabled-appended:latest"
			r := mustPackBuild(t, image, builderWithout, append([]string{"--trust-extra-buildpacks", "--env", "BP_INIT_ENABLED=false"}, args...)...)
			Expect(r.Output).To(ContainSubstring(disabledLine), way)
			Expect(buildpackIDs(t, image)).To(ContainElement(initBuildpackID), "%s: the init passed detection", way)
			Expect(processesByType(t, image)).To(Equal(processesByType(t, settings.Without)), way)
		}
	})

	it("fails on a bad BP_INIT_ENABLED, naming it; detection's warning shows only with -v", func() {
		const buildError = `invalid BP_INIT_ENABLED "maybe": expected true or false`
		const detectWarning = buildError + ": the build will fail"
		r := packBuild(t, "pid1-it/sys-bad:latest", builderSystem, "--env", "BP_INIT_ENABLED=maybe")
		Expect(r.ExitCode).NotTo(Equal(0))
		Expect(r.Output).To(ContainSubstring(buildError))
		Expect(r.Output).NotTo(ContainSubstring(detectWarning))

		r = packBuild(t, "pid1-it/sys-bad:latest", builderSystem, "--env", "BP_INIT_ENABLED=maybe", "-v")
		Expect(r.ExitCode).NotTo(Equal(0))
		Expect(r.Output).To(ContainSubstring(detectWarning))
	})

	it("ignores the user's BP_INIT_ENABLED=false on a builder with the override lock", func() {
		image := "pid1-it/sys-locked:latest"
		r := mustPackBuild(t, image, builderSystemLocked, "--env", "BP_INIT_ENABLED=false")
		Expect(r.Output).NotTo(ContainSubstring(disabledLine))
		expectEveryTypeWrapped(t, image, r.Output)
		Expect(pid1Cmdline(t, image)).To(HavePrefix(initPath + " -- "))

		// The same in project.toml.
		app := t.TempDir()
		Expect(os.CopyFS(app, os.DirFS(settings.App))).To(Succeed())
		Expect(os.WriteFile(filepath.Join(app, "project.toml"), []byte("[_]\nschema-version = \"0.2\"\n\n"+
			"[[io.buildpacks.build.env]]\n  name = \"BP_INIT_ENABLED\"\n  value = \"false\"\n"), 0o644)).To(Succeed())
		r = mustPackBuild(t, image, builderSystem, "--path", app)
		Expect(r.Output).To(ContainSubstring(disabledLine), "project.toml's BP_INIT_ENABLED=false opts out without the lock")
		r = mustPackBuild(t, image, builderSystemLocked, "--path", app)
		Expect(r.Output).NotTo(ContainSubstring(disabledLine))
		expectEveryTypeWrapped(t, image, r.Output)
	})

	// What an app developer can do on a system builder with pack v0.40.0: pack checks each
	// required system buildpack against the buildpacks the user brings (directories, .cnb
	// files, images); buildpacks named by id come from the builder and are not checked.
	context("with the app developer's own order", func() {
		processesDir := func() string {
			return filepath.Join(settings.Root, "integration", "testdata", "buildpacks", "processes")
		}
		initCNB := func() string { return filepath.Join(settings.Root, "build", "init-buildpack.cnb") }

		it("builds wrapped where pack finds the init, and fails naming it where it does not", func() {
			buildAppDeveloperOrders(t, "pid1-it/sys-own-order:latest", builderSystem, expectEveryTypeWrapped)
		})

		it("runs the init with --disable-system-buildpacks --buildpack DIR, since the builder's /cnb/system.toml stays", func() {
			image := "pid1-it/sys-own-order-disabled:latest"
			r := mustPackBuild(t, image, builderSystem, "--trust-extra-buildpacks", "--disable-system-buildpacks", "--buildpack", processesDir())
			expectEveryTypeWrapped(t, image, r.Output)
		})

		// The ordering trap (issue 13, item 3): the app developer names the init first, the
		// lifecycle does not append the system copy to a group that holds it, and the init runs
		// before the buildpack whose process types it should wrap.
		initFirst := func() []string {
			return []string{"--trust-extra-buildpacks", "--buildpack", initCNB(), "--buildpack", processesDir()}
		}

		it("passes with the init first, leaving the later buildpacks' types unwrapped, and warns without -v", func() {
			image := "pid1-it/sys-init-first:latest"
			r := mustPackBuild(t, image, builderSystem, initFirst()...)
			Expect(buildpackIDs(t, image)).To(Equal([]string{initBuildpackID, "samples/processes"}), "the system copy is not appended")
			types := processesByType(t, image)
			Expect(types).NotTo(BeEmpty())
			for typ, p := range types {
				Expect(p.Command[0]).NotTo(Equal(initPath), typ)
			}
			Expect(r.Output).To(ContainSubstring(initFirstWarning))
		})

		it("fails with the init first on a builder that locks BP_INIT_ENABLED, in one line naming the buildpacks after it", func() {
			r := packBuild(t, "pid1-it/sys-locked-init-first:latest", builderSystemLocked, initFirst()...)
			t.Logf("pack build --buildpack <init> --buildpack <dir> on the locked builder: exit %d", r.ExitCode)
			Expect(r.ExitCode).NotTo(Equal(0), r.Output)
			Expect(r.Output).To(ContainSubstring(initFirstError))
			Expect(r.Output).NotTo(ContainSubstring(initFirstWarning))
		})
	})

	// Lifecycle 0.20.12 supports Platform API 0.14 at most and ignores [system]: pack creates
	// the builder and builds without a word, and no image is wrapped.
	it("is silently ignored on lifecycle 0.20.12: the build passes and nothing is wrapped", func() {
		image := "pid1-it/sys-lifecycle-020:latest"
		r := mustPackBuild(t, image, builderSystem020)
		Expect(buildpackIDs(t, image)).NotTo(ContainElement(initBuildpackID))
		Expect(r.Output).NotTo(ContainSubstring("system"))
		Expect(r.Output).NotTo(ContainSubstring(initBuildpackID))
		expectNoneWrapped(image)
	})
}

// appProcessesDir is the sample app without legacy-processes, which the builders' second group
// (samples/processes alone) detects.
func appProcessesDir() string {
	return filepath.Join(settings.Root, "integration", ".work", "app-processes")
}

// appDeveloperOrder is one way an app developer gives pack v0.40.0 an order of their own on a
// builder that enforces the init as a system buildpack.
type appDeveloperOrder struct {
	name string
	args []string
	// project is the project.toml to write into a copy of the app, if any.
	project string
	// fails is false when the build passes with every type wrapped.
	fails bool
}

// packArgs are the pack build arguments of the way o, with a copy of the app holding its
// project.toml if it has one.
func (o appDeveloperOrder) packArgs(t *testing.T) []string {
	t.Helper()
	args := append([]string{"--trust-extra-buildpacks"}, o.args...)
	if o.project != "" {
		app := t.TempDir()
		if err := os.CopyFS(app, os.DirFS(settings.App)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(app, "project.toml"), []byte("[_]\nschema-version = \"0.2\"\n\n"+o.project), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--path", app)
	}
	return args
}

// appDeveloperOrders are the twelve ways of appDeveloperOrder the tests try: pack checks each
// required system buildpack against the buildpacks the user brings (directories, .cnb files,
// images); buildpacks named by id come from the builder and are not checked.
func appDeveloperOrders() []appDeveloperOrder {
	processesDir := filepath.Join(settings.Root, "integration", "testdata", "buildpacks", "processes")
	initCNB := filepath.Join(settings.Root, "build", "init-buildpack.cnb")
	return []appDeveloperOrder{
		{name: "--buildpack with a builder buildpack's id", args: []string{"--buildpack", "samples/processes"}},
		{name: "--buildpack from=builder", args: []string{"--buildpack", "from=builder"}},
		{name: "--buildpack ID, also naming the init by id", args: []string{"--buildpack", "samples/processes", "--buildpack", "pid1-buildpacks/init@0.1.0"}},
		{name: "--buildpack DIR --buildpack the init's .cnb", args: []string{"--buildpack", processesDir, "--buildpack", initCNB}},
		{name: "project.toml: a group of builder buildpack ids",
			project: "[[io.buildpacks.group]]\n  id = \"samples/processes\"\n"},
		{name: "project.toml: a group of a directory and the init's .cnb",
			project: "[[io.buildpacks.group]]\n  uri = \"" + processesDir + "\"\n\n[[io.buildpacks.group]]\n  uri = \"" + initCNB + "\"\n"},
		{name: "--buildpack DIR", args: []string{"--buildpack", processesDir}, fails: true},
		{name: "--buildpack DIR --buildpack pid1-buildpacks/init@0.1.0", args: []string{"--buildpack", processesDir, "--buildpack", "pid1-buildpacks/init@0.1.0"}, fails: true},
		{name: "--buildpack DIR --buildpack pid1-buildpacks/init", args: []string{"--buildpack", processesDir, "--buildpack", "pid1-buildpacks/init"}, fails: true},
		{name: "--buildpack from=builder --buildpack DIR", args: []string{"--buildpack", "from=builder", "--buildpack", processesDir}, fails: true},
		{name: "--buildpack DIR --buildpack urn:cnb:builder:pid1-buildpacks/init",
			args: []string{"--buildpack", processesDir, "--buildpack", "urn:cnb:builder:pid1-buildpacks/init"}, fails: true},
		{name: "project.toml: a directory in the group, the init's .cnb in io.buildpacks.post.group",
			project: "[[io.buildpacks.group]]\n  uri = \"" + processesDir + "\"\n\n[[io.buildpacks.post.group]]\n  uri = \"" + initCNB + "\"\n", fails: true},
	}
}

// buildAppDeveloperOrders builds image with builder in each of appDeveloperOrders: where the
// way fails, pack must refuse it for want of the system buildpack; where it passes, expect
// checks the image.
func buildAppDeveloperOrders(t *testing.T, image, builder string, expect func(t *testing.T, image, output string)) {
	t.Helper()
	Expect := NewWithT(t).Expect
	for _, w := range appDeveloperOrders() {
		r := packBuild(t, image, builder, w.packArgs(t)...)
		t.Logf("%s: exit %d", w.name, r.ExitCode)
		if w.fails {
			Expect(r.ExitCode).NotTo(Equal(0), w.name)
			Expect(r.Output).To(ContainSubstring(missingSystemBuildpack), w.name)
			continue
		}
		Expect(r.ExitCode).To(Equal(0), "%s\n%s", w.name, r.Output)
		expect(t, image, r.Output)
	}
}

// firstOf is what the wrapped process runs after "init --": the command, or bash for a
// Buildpack API 0.8 shell process.
func firstOf(p process) string {
	if !p.Direct && len(p.Command) == 1 && strings.Contains(p.Command[0], " ") {
		return "/bin/bash"
	}
	return p.Command[0]
}

// expectEveryTypeWrapped checks that the init buildpack ran last in the build of image and that
// every process type of image starts through the init; output is the build's, for the failure
// message.
func expectEveryTypeWrapped(t *testing.T, image, output string) {
	t.Helper()
	Expect := NewWithT(t).Expect
	ids := buildpackIDs(t, image)
	Expect(ids).NotTo(BeEmpty())
	Expect(ids[len(ids)-1]).To(Equal(initBuildpackID), "the init buildpack ran last: %v\n%s", ids, output)
	types := processesByType(t, image)
	Expect(types).NotTo(BeEmpty())
	for typ, p := range types {
		Expect(p.Command[0]).To(Equal(initPath), "%s in %s", typ, image)
	}
}

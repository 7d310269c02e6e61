package integration_test

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

// testEverywhereBuilder checks examples/builder-everywhere.toml with pack v0.40.0 (issue 13,
// item 2): the init last in every group and in [system.post] runs once, in a plain build and
// with the app developer's own orders. Its builds at Platform API 0.9 and 0.11, which ignore
// [system.post], are in testPlatforms.
func testEverywhereBuilder(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	it("wraps every type of each group once in a plain pack build: the lifecycle does not append the system copy to a group that holds it", func() {
		for _, app := range []struct {
			path string
			ids  []string
		}{
			{settings.App, []string{"samples/legacy", "samples/processes", initBuildpackID}},
			{appProcessesDir(), []string{"samples/processes", initBuildpackID}},
		} {
			image := "pid1-it/platforms-everywhere:latest"
			r := mustPackBuild(t, image, builderEverywhere, "--path", app.path, "-v")
			Expect(r.Output).To(ContainSubstring("CNB_PLATFORM_API=0.15"))
			Expect(r.Output).NotTo(ContainSubstring("Appending 1 system buildpack(s) to group"), "the init is in every group already")
			Expect(buildpackIDs(t, image)).To(Equal(app.ids))
			expectWrappedOnce(t, image, r.Output)
		}
	})

	it("wraps once with each order the app developer gives where pack finds the init, and fails as the system-only builder does where it does not", func() {
		buildAppDeveloperOrders(t, "pid1-it/platforms-everywhere-own-order:latest", builderEverywhere, expectWrappedOnce)
	})

	// pack v0.40.0 expands --buildpack from=builder into the builder's groups, each of which ends
	// with the init here, and appends the buildpacks that follow; the detector keeps the first of
	// two copies of the init (the .cnb brought to pass pack's check), so the init runs before
	// them. The [system.post]-only builder has no init in its groups and wraps them.
	it("runs the init before the buildpacks that follow --buildpack from=builder, leaving their types unwrapped with the warning, where the [system.post]-only builder wraps them", func() {
		app := t.TempDir()
		Expect(os.CopyFS(app, os.DirFS(settings.App))).To(Succeed())
		Expect(os.WriteFile(filepath.Join(app, "profiles"), nil, 0o644)).To(Succeed())
		args := []string{"--path", app, "--trust-extra-buildpacks", "--buildpack", "from=builder",
			"--buildpack", filepath.Join(settings.Root, "integration", "testdata", "buildpacks", "profiles"),
			"--buildpack", filepath.Join(settings.Root, "build", "init-buildpack.cnb")}

		image := "pid1-it/platforms-everywhere-from-builder:latest"
		r := mustPackBuild(t, image, builderEverywhere, args...)
		Expect(buildpackIDs(t, image)).To(Equal([]string{"samples/legacy", "samples/processes", initBuildpackID, "samples/profiles"}))
		Expect(r.Output).To(ContainSubstring("Warning: " + initBuildpackID + " is not the last buildpack of the group: process types of samples/profiles will not be wrapped"))
		types := processesByType(t, image)
		for _, typ := range []string{"args", "wd-var", "wd-link", "relative"} {
			Expect(types).To(HaveKey(typ))
			Expect(types[typ].BuildpackID).To(Equal("samples/profiles"), typ)
			Expect(types[typ].Command[0]).NotTo(Equal(initPath), "%s of samples/profiles", typ)
		}
		Expect(types["web"].Command[0]).To(Equal(initPath), "web of samples/processes, before the init")

		image = "pid1-it/platforms-system-from-builder:latest"
		r = mustPackBuild(t, image, builderSystem, args...)
		Expect(buildpackIDs(t, image)).To(Equal([]string{"samples/legacy", "samples/processes", "samples/profiles", initBuildpackID}))
		expectEveryTypeWrapped(t, image, r.Output)
	})
}

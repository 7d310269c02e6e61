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

	// pack v0.40.0 keeps the builder's groups, each of which ends with the init here, for
	// --buildpack from=builder and for a project.toml with only io.buildpacks.post.group, and
	// appends the other buildpacks; the detector keeps the first of two copies of the init (the
	// .cnb brought to pass pack's check), so the init runs before them. The [system.post]-only
	// builder has no init in its groups and wraps them.
	it("runs the init before the buildpacks appended to the builder's groups, leaving their types unwrapped with the warning, where the [system.post]-only builder wraps them", func() {
		profilesDir := filepath.Join(settings.Root, "integration", "testdata", "buildpacks", "profiles")
		initCNB := filepath.Join(settings.Root, "build", "init-buildpack.cnb")
		for _, w := range []struct{ name, project string }{
			{name: "--buildpack from=builder --buildpack DIR --buildpack the init's .cnb"},
			{name: "project.toml: DIR and the init's .cnb in io.buildpacks.post.group",
				project: "[_]\nschema-version = \"0.2\"\n\n[[io.buildpacks.post.group]]\n  uri = \"" + profilesDir + "\"\n\n[[io.buildpacks.post.group]]\n  uri = \"" + initCNB + "\"\n"},
		} {
			app := t.TempDir()
			Expect(os.CopyFS(app, os.DirFS(settings.App))).To(Succeed())
			Expect(os.WriteFile(filepath.Join(app, "profiles"), nil, 0o644)).To(Succeed())
			args := []string{"--path", app, "--trust-extra-buildpacks"}
			if w.project == "" {
				args = append(args, "--buildpack", "from=builder", "--buildpack", profilesDir, "--buildpack", initCNB)
			} else {
				Expect(os.WriteFile(filepath.Join(app, "project.toml"), []byte(w.project), 0o644)).To(Succeed())
			}

			image := "pid1-it/platforms-everywhere-appended:latest"
			r := mustPackBuild(t, image, builderEverywhere, args...)
			Expect(buildpackIDs(t, image)).To(Equal([]string{"samples/legacy", "samples/processes", initBuildpackID, "samples/profiles"}), w.name)
			Expect(r.Output).To(ContainSubstring("Warning: "+initBuildpackID+" is not the last buildpack of the group: process types of samples/profiles will not be wrapped"), w.name)
			types := processesByType(t, image)
			for _, typ := range []string{"args", "wd-var", "wd-link", "relative"} {
				Expect(types).To(HaveKey(typ), w.name)
				Expect(types[typ].BuildpackID).To(Equal("samples/profiles"), "%s: %s", w.name, typ)
				Expect(types[typ].Command[0]).NotTo(Equal(initPath), "%s: %s of samples/profiles", w.name, typ)
			}
			Expect(types["web"].Command[0]).To(Equal(initPath), "%s: web of samples/processes, before the init", w.name)

			image = "pid1-it/platforms-system-appended:latest"
			r = mustPackBuild(t, image, builderSystem, args...)
			Expect(buildpackIDs(t, image)).To(Equal([]string{"samples/legacy", "samples/processes", "samples/profiles", initBuildpackID}), w.name)
			expectEveryTypeWrapped(t, image, r.Output)
		}
	})
}

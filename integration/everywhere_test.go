package integration_test

import (
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
}

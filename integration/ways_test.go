package integration_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

// testWaysOfUse checks both ways of using the buildpack: listed last in a builder's order
// (from the .cnb scripts/package.sh makes) and appended with pack build --buildpack
// (issue 4, item 10).
func testWaysOfUse(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	it("works listed last in every group of builder.toml, from the .cnb", func() {
		label := docker(t, "image", "inspect", "--format", `{{index .Config.Labels "io.buildpacks.buildpack.order"}}`, builderWith)
		var order []struct {
			Group []struct {
				ID       string `json:"id"`
				Optional bool   `json:"optional"`
			} `json:"group"`
		}
		Expect(json.Unmarshal([]byte(label), &order)).To(Succeed())
		Expect(order).NotTo(BeEmpty())
		for i, g := range order {
			Expect(g.Group[len(g.Group)-1].ID).To(Equal(initBuildpackID), "group %d: %s", i, label)
		}
		t.Logf("builder order: %s", label)
		expectWrapped(t, settings.With)
	})

	it("works appended with pack build --buildpack from=builder --buildpack <directory>", func() {
		image := "pid1-it/appended-dir:latest"
		mustPackBuild(t, image, builderWithout,
			"--buildpack", "from=builder", "--buildpack", settings.Root, "--trust-extra-buildpacks")
		expectWrapped(t, image)
	})

	it("works appended with pack build --buildpack from=builder --buildpack <.cnb>", func() {
		image := "pid1-it/appended-cnb:latest"
		mustPackBuild(t, image, builderWithout,
			"--buildpack", "from=builder", "--buildpack", filepath.Join(settings.Root, "build", "init-buildpack.cnb"),
			"--trust-extra-buildpacks")
		expectWrapped(t, image)
	})
}

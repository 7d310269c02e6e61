package integration_test

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

// testRebuild checks that a rebuild reuses the init layer (issue 4, item 8).
func testRebuild(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	it("reuses the init layer on a rebuild: same digest, and the log says so", func() {
		image := "pid1-it/rebuild:latest"
		first := mustPackBuild(t, image, builderWith)
		firstSHA := initLayerSHA(t, image)
		Expect(first.Output).To(ContainSubstring("Adding layer '" + initBuildpackID + ":init'"))

		second := mustPackBuild(t, image, builderWith)
		secondSHA := initLayerSHA(t, image)
		t.Logf("init layer digest: first build %s, rebuild %s; build times %v, %v", firstSHA, secondSHA, first.Duration, second.Duration)
		for _, line := range strings.Split(second.Output, "\n") {
			if strings.Contains(strings.ToLower(line), "reus") {
				t.Logf("rebuild log: %s", strings.TrimSpace(line))
			}
		}
		Expect(secondSHA).To(Equal(firstSHA))
		Expect(second.Output).To(ContainSubstring("Reusing layer '" + initBuildpackID + ":init'"))
	})
}

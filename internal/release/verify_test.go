package release_test

import (
	"debug/elf"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"

	"github.com/pid1-buildpacks/init/internal/release"
	"github.com/pid1-buildpacks/init/internal/tabletest"
)

func testCheckPlatform(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	amd64 := v1.Platform{OS: "linux", Architecture: "amd64"}
	arm64 := v1.Platform{OS: "linux", Architecture: "arm64"}

	it("accepts an image that holds and declares its platform only", func() {
		Expect(release.CheckPlatform(forArch("amd64").image(t), amd64)).To(Succeed())
		Expect(release.CheckPlatform(forArch("arm64").image(t), arm64)).To(Succeed())
	})

	wrongMachine := forArch("arm64")
	wrongMachine.Machine = elf.EM_X86_64
	bothTargets := forArch("arm64")
	bothTargets.Targets = []string{"linux/amd64", "linux/arm64"}
	noInit := forArch("amd64")
	noInit.Omit = "bin/init"
	cases := map[string]struct {
		image    fakeBuildpack
		platform v1.Platform
		err      string
	}{
		"arm64 image holding x86-64 binaries": {wrongMachine, arm64, "cnb/buildpacks/pid1-buildpacks_init/0.1.0/bin/build is built for EM_X86_64 (amd64), expected EM_AARCH64 for linux/arm64"},
		"image declaring both targets":        {bothTargets, arm64, "buildpack pid1-buildpacks/init@0.1.0 declares targets [linux/amd64 linux/arm64], expected only linux/arm64"},
		"image without bin/init":              {noInit, amd64, "cnb/buildpacks/pid1-buildpacks_init/0.1.0/bin/init is missing from the image"},
		"amd64 image checked as arm64":        {forArch("amd64"), arm64, "image configuration names linux/amd64, expected linux/arm64"},
		"unsupported platform":                {forArch("amd64"), v1.Platform{OS: "linux", Architecture: "riscv64"}, "unsupported platform linux/riscv64: expected linux/amd64 or linux/arm64"},
	}
	for name, c := range tabletest.Sorted(cases) {
		it("refuses an "+name, func() {
			Expect(release.CheckPlatform(c.image.image(t), c.platform)).To(MatchError(c.err))
		})
	}
}

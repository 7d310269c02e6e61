package release_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/BurntSushi/toml"
	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

// testReleaseNotes checks that CHANGELOG.md and the release snippets of the README and docs/*.md
// name the version of buildpack.toml, the one place it is set.
func testReleaseNotes(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	root := filepath.Join("..", "..")
	var descriptor struct {
		Buildpack struct{ Version string }
	}
	it.Before(func() {
		_, err := toml.DecodeFile(filepath.Join(root, "buildpack.toml"), &descriptor)
		Expect(err).NotTo(HaveOccurred())
		Expect(descriptor.Buildpack.Version).NotTo(BeEmpty())
	})

	it("CHANGELOG.md's top entry is the version in buildpack.toml", func() {
		changelog, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
		Expect(err).NotTo(HaveOccurred())
		top := regexp.MustCompile(`(?m)^## (\S+) - \d{4}-\d{2}-\d{2}$`).FindSubmatch(changelog)
		Expect(top).NotTo(BeNil(), "CHANGELOG.md has no entry `## VERSION - YYYY-MM-DD`")
		Expect(string(top[1])).To(Equal(descriptor.Buildpack.Version))
	})

	it("the release snippets of the README and docs/*.md name the version in buildpack.toml", func() {
		docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
		Expect(err).NotTo(HaveOccurred())
		version := regexp.MustCompile(`pid1-buildpacks/init:(\d[0-9A-Za-z.+-]*[0-9A-Za-z])|id = "pid1-buildpacks/init", version = "([^"]+)"`)
		var refs int
		for _, file := range append([]string{filepath.Join(root, "README.md")}, docs...) {
			text, err := os.ReadFile(file)
			Expect(err).NotTo(HaveOccurred())
			for _, m := range version.FindAllSubmatch(text, -1) {
				refs++
				Expect(string(m[1])+string(m[2])).To(Equal(descriptor.Buildpack.Version), "%s: %s", file, m[0])
			}
		}
		Expect(refs).To(BeNumerically(">=", 3))
	})
}

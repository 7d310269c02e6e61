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

// testReleaseNotes checks that CHANGELOG.md and the README's release snippets name the version
// of buildpack.toml, the one place it is set.
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

	it("the README's release snippets name the version in buildpack.toml", func() {
		readme, err := os.ReadFile(filepath.Join(root, "README.md"))
		Expect(err).NotTo(HaveOccurred())
		refs := regexp.MustCompile(`pid1-buildpacks/init:(\d[0-9A-Za-z.+-]*[0-9A-Za-z])|id = "pid1-buildpacks/init", version = "([^"]+)"`).FindAllSubmatch(readme, -1)
		Expect(len(refs)).To(BeNumerically(">=", 3))
		for _, m := range refs {
			Expect(string(m[1])+string(m[2])).To(Equal(descriptor.Buildpack.Version), string(m[0]))
		}
	})
}

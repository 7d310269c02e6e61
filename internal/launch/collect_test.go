package launch_test

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"

	"github.com/pid1-buildpacks/init/internal/launch"
)

func testCollect(t *testing.T, context spec.G, it spec.S) {
	var (
		Expect    = NewWithT(t).Expect
		root      string
		layersDir string
	)

	const ownID = "pid1-buildpacks/init"

	it.Before(func() {
		root = t.TempDir()
		layersDir = filepath.Join(root, "pid1-buildpacks_init")
		Expect(os.MkdirAll(layersDir, 0755)).To(Succeed())
	})

	writeLaunch := func(escapedID, content string) string {
		dir := filepath.Join(root, escapedID)
		Expect(os.MkdirAll(dir, 0755)).To(Succeed())
		path := filepath.Join(dir, "launch.toml")
		Expect(os.WriteFile(path, []byte(content), 0644)).To(Succeed())
		return path
	}
	writeGroup := func(content string) {
		Expect(os.WriteFile(filepath.Join(root, "group.toml"), []byte(content), 0644)).To(Succeed())
	}

	context("with group.toml", func() {
		it("reads the earlier buildpacks in group order, each in its own API", func() {
			writeGroup(`
[[group]]
  id = "z/first"
  version = "1"
  api = "0.8"
[[group]]
  id = "a/no-processes"
  version = "1"
  api = "0.10"
[[group]]
  id = "m/second"
  version = "1"
  api = "0.10"
[[group]]
  id = "pid1-buildpacks/init"
  version = "0.1.0"
  api = "0.10"
`)
			writeLaunch("z_first", "[[processes]]\ntype = \"web\"\ncommand = \"run\"\n")
			writeLaunch("m_second", "[[processes]]\ntype = \"web\"\ncommand = [\"serve\"]\n")

			c, err := launch.Collect(layersDir, ownID)
			Expect(err).NotTo(HaveOccurred())
			Expect(c.Ordered).To(BeTrue())
			Expect(c.Warnings).To(BeEmpty())
			Expect(c.Group).To(Equal([]string{"z/first", "a/no-processes", "m/second", "pid1-buildpacks/init"}))
			Expect(c.Sets).To(Equal([][]launch.Process{
				{{Type: "web", Command: []string{"run"}, BuildpackID: "z/first", API: "0.8", Legacy: true}},
				{{Type: "web", Command: []string{"serve"}, Direct: true, BuildpackID: "m/second", API: "0.10"}},
			}))
		})

		it("ignores working-dir for Buildpack API 0.7, as the lifecycle does, and warns", func() {
			writeGroup("[[group]]\nid = \"old/bp\"\nversion = \"1\"\napi = \"0.7\"\n[[group]]\nid = \"pid1-buildpacks/init\"\nversion = \"0.1.0\"\napi = \"0.10\"\n")
			writeLaunch("old_bp", "[[processes]]\ntype = \"web\"\ncommand = \"run\"\ndirect = true\nworking-dir = \"/x\"\n")

			c, err := launch.Collect(layersDir, ownID)
			Expect(err).NotTo(HaveOccurred())
			Expect(c.Sets[0][0].WorkingDirectory).To(BeEmpty())
			Expect(c.Warnings).To(ConsistOf(ContainSubstring(`process type "web" of old/bp: working-dir is not supported by Buildpack API 0.7`)))
		})

		it("names the buildpacks that come after this one and does not read them", func() {
			writeGroup(`
[[group]]
  id = "a/before"
  version = "1"
  api = "0.10"
[[group]]
  id = "pid1-buildpacks/init"
  version = "0.1.0"
  api = "0.10"
[[group]]
  id = "b/after"
  version = "1"
  api = "0.10"
[[group]]
  id = "c/after"
  version = "1"
  api = "0.10"
`)
			writeLaunch("a_before", "[[processes]]\ntype = \"web\"\ncommand = [\"a\"]\n")
			writeLaunch("b_after", "[[processes]]\ntype = \"worker\"\ncommand = [\"b\"]\n")

			c, err := launch.Collect(layersDir, ownID)
			Expect(err).NotTo(HaveOccurred())
			Expect(c.Sets).To(HaveLen(1))
			Expect(c.Sets[0][0].BuildpackID).To(Equal("a/before"))
			Expect(c.Later).To(Equal([]string{"b/after", "c/after"}))
			Expect(c.Warnings).To(BeEmpty())
		})

		it("warns and reads every buildpack of the group when this one is not in it", func() {
			writeGroup("[[group]]\nid = \"a/one\"\nversion = \"1\"\napi = \"0.10\"\n")
			writeLaunch("a_one", "[[processes]]\ntype = \"web\"\ncommand = [\"a\"]\n")

			c, err := launch.Collect(layersDir, ownID)
			Expect(err).NotTo(HaveOccurred())
			Expect(c.Sets).To(HaveLen(1))
			Expect(c.Warnings).To(ConsistOf(ContainSubstring("pid1-buildpacks/init is not in")))
		})

		it("fails naming a launch.toml that cannot be parsed", func() {
			writeGroup("[[group]]\nid = \"a/one\"\nversion = \"1\"\napi = \"0.10\"\n[[group]]\nid = \"pid1-buildpacks/init\"\nversion = \"0.1.0\"\napi = \"0.10\"\n")
			path := writeLaunch("a_one", "[[processes]\n")

			_, err := launch.Collect(layersDir, ownID)
			Expect(err).To(MatchError(ContainSubstring("unable to read " + path)))
		})

		it("fails naming a launch.toml that cannot be read", func() {
			writeGroup("[[group]]\nid = \"a/one\"\nversion = \"1\"\napi = \"0.10\"\n[[group]]\nid = \"pid1-buildpacks/init\"\nversion = \"0.1.0\"\napi = \"0.10\"\n")
			path := filepath.Join(root, "a_one", "launch.toml")
			Expect(os.MkdirAll(path, 0755)).To(Succeed()) // a directory where the file should be

			_, err := launch.Collect(layersDir, ownID)
			Expect(err).To(MatchError(ContainSubstring("unable to read " + path)))
		})

		it("fails naming a group.toml that cannot be parsed", func() {
			writeGroup("[[group]\n")
			_, err := launch.Collect(layersDir, ownID)
			Expect(err).To(MatchError(ContainSubstring("unable to read " + filepath.Join(root, "group.toml"))))
		})
	})

	context("without group.toml", func() {
		it("reads every launch.toml present, sorted by directory, inferring formats, and warns about duplicates", func() {
			writeLaunch("b_two", "[[processes]]\ntype = \"web\"\ncommand = [\"two\"]\n")
			first := writeLaunch("a_one", "[[processes]]\ntype = \"web\"\ncommand = \"one\"\ndirect = true\n[[processes]]\ntype = \"worker\"\ncommand = \"w\"\n")
			second := filepath.Join(root, "b_two", "launch.toml")
			Expect(os.MkdirAll(filepath.Join(root, "sbom"), 0755)).To(Succeed())
			Expect(os.WriteFile(filepath.Join(layersDir, "launch.toml"), []byte("[[processes]]\ntype = \"own\"\ncommand = [\"x\"]\n"), 0644)).To(Succeed())

			c, err := launch.Collect(layersDir, ownID)
			Expect(err).NotTo(HaveOccurred())
			Expect(c.Ordered).To(BeFalse())
			Expect(c.Group).To(Equal([]string{"a/one", "b/two", ownID, "sbom"}), "every directory, by name, for the profile scripts")
			Expect(c.Sets).To(Equal([][]launch.Process{
				{
					{Type: "web", Command: []string{"one"}, Direct: true, BuildpackID: "a/one", Legacy: true},
					{Type: "worker", Command: []string{"w"}, BuildpackID: "a/one", Legacy: true},
				},
				{{Type: "web", Command: []string{"two"}, Direct: true, BuildpackID: "b/two"}},
			}))
			Expect(c.Warnings).To(ConsistOf(
				ContainSubstring("group.toml not found"),
				ContainSubstring(`process type "web" is defined in `+first+` and in `+second+`: without group.toml their order is unknown`),
			))
		})

		it("fails naming an unreadable launch.toml", func() {
			path := writeLaunch("a_one", "not toml at all = = =")
			_, err := launch.Collect(layersDir, ownID)
			Expect(err).To(MatchError(ContainSubstring("unable to read " + path)))
		})
	})
}

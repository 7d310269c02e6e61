package integration_test

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
	"gopkg.in/yaml.v3"
)

// release is the buildpack as the suite published it, once, with the publish snippet of
// docs/releases.md, to a repository of its own in the local registry (a version published before
// with other sources would be refused, rightly).
var release struct {
	Repository, Version, Digest string
	Publish                     result
}

// published publishes the buildpack the first time it is called.
func published(t *testing.T) {
	t.Helper()
	if release.Digest != "" {
		return
	}
	toml, err := os.ReadFile(filepath.Join(settings.Root, "buildpack.toml"))
	if err != nil {
		t.Fatalf("unable to read buildpack.toml: %v", err)
	}
	release.Version = string(regexp.MustCompile(`(?m)^\s*version\s*=\s*"([^"]+)"`).FindSubmatch(toml)[1])
	release.Repository = fmt.Sprintf("%s/pid1-it/%d/init", registryAddr(), time.Now().UnixNano())
	release.Publish = runSnippet(t, fromDocs(docSnippet(t, "publish")))
	if release.Publish.ExitCode != 0 {
		t.Fatalf("scripts/publish.sh %s: exit %d\n%s", release.Repository, release.Publish.ExitCode, release.Publish.Output)
	}
	release.Digest = strings.TrimSpace(release.Publish.Stdout)
	t.Logf("published %s:%s as %s in %v", release.Repository, release.Version, release.Digest, release.Publish.Duration.Round(10*time.Millisecond))
}

// fromDocs puts the suite's repository and digest into a snippet of docs/releases.md.
func fromDocs(snippet string) string {
	return strings.NewReplacer(
		"127.0.0.1:5311/pid1-buildpacks/init", release.Repository,
		"sha256:<digest>", release.Digest,
	).Replace(snippet)
}

// releaseBuilder creates the builder name from a builder.toml snippet of docs/releases.md (initInOrder:
// the init buildpack also last in every group, as a builder without system buildpacks needs);
// it is removed when the test ends.
func releaseBuilder(t *testing.T, name, snippet string, initInOrder bool) {
	t.Helper()
	r := createBuilder(t, name, t.TempDir(), settings.Root, sampleBuilderTOML(fromDocs(docSnippet(t, snippet)), initInOrder))
	if r.ExitCode != 0 {
		t.Fatalf("pack builder create %s: exit %d\n%s", name, r.ExitCode, r.Output)
	}
	// Nothing in buildpack.toml or the builder's configuration that pack warns about.
	for _, warning := range []string{"Warning", "Pro tip"} {
		if strings.Contains(r.Output, warning) {
			t.Fatalf("pack builder create %s warns:\n%s", name, r.Output)
		}
	}
}

// removeReleaseImages removes the images pulled from the suite's repositories in the local
// registry.
func removeReleaseImages() {
	out, err := exec.Command("docker", "images", "--format", "{{.ID}} {{.Repository}}").Output()
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		id, repo, _ := strings.Cut(line, " ")
		if strings.HasPrefix(repo, registryAddr()+"/pid1-it/") {
			_ = exec.Command("docker", "rmi", "-f", id).Run()
		}
	}
}

// testRelease publishes the buildpack to the local registry with scripts/publish.sh and builds
// the sample app with the published image, the ways docs/releases.md says (issue 8).
func testRelease(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	const (
		builderByDigest = "pid1-it/builder-release-digest"
		builderSystem   = "pid1-it/builder-release-system"
	)

	it.Before(func() {
		published(t)
	})

	it("publishes one OCI index, each platform's image holding its own binaries and declaring only its target", func() {
		Expect(release.Digest).To(MatchRegexp(`^sha256:[0-9a-f]{64}$`), "stdout of scripts/publish.sh: %q", release.Publish.Stdout)
		tags := registryTags(t, release.Repository)
		major, minor, _ := strings.Cut(release.Version, ".")
		minor, _, _ = strings.Cut(minor, ".")
		Expect(tags).To(ConsistOf(release.Version, major+"."+minor, major, "latest"))
		for _, tag := range tags {
			Expect(registryDigest(t, release.Repository, tag)).To(Equal(release.Digest), "tag %s", tag)
		}

		// Nothing in buildpack.toml that pack buildpack package warns about.
		packageLog, err := os.ReadFile(filepath.Join(settings.Root, "build", "publish-package.log"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(packageLog)).To(ContainSubstring("Successfully created package"))
		Expect(strings.ToLower(string(packageLog))).NotTo(ContainSubstring("warn"))

		want := map[string]elf.Machine{"linux/amd64": elf.EM_X86_64, "linux/arm64": elf.EM_AARCH64}
		platforms := publishedPlatforms(t, release.Repository, release.Version)
		Expect(platforms).To(HaveLen(2))
		for _, p := range platforms {
			Expect(want).To(HaveKey(p.Platform))
			Expect(p.Machines).To(HaveLen(3), "%s: bin/build, bin/detect and bin/init", p.Platform)
			for path, machine := range p.Machines {
				Expect(machine).To(Equal(want[p.Platform]), "%s in the %s image", path, p.Platform)
			}
			Expect(p.DeclaredArchs).To(Equal([]string{strings.TrimPrefix(p.Platform, "linux/")}), "%s: targets in buildpack.toml", p.Platform)
			t.Logf("%s (%s): %v; buildpack.toml declares arch %v", p.Platform, p.Digest, p.Machines, p.DeclaredArchs)
		}
	})

	context("bad input: one line, a non-zero exit, no tag moved", func() {
		// errorLines are the lines of publish.sh's output that are not progress.
		errorLines := func(output string) []string {
			var lines []string
			for _, line := range strings.Split(strings.TrimSpace(output), "\n") {
				if !strings.HasPrefix(line, "Publishing ") && !strings.HasPrefix(line, "Packaging ") {
					lines = append(lines, line)
				}
			}
			return lines
		}
		publish := func(args ...string) result {
			return run(t, 5*time.Minute, nil, filepath.Join(settings.Root, "scripts", "publish.sh"), args...)
		}

		cases := []struct {
			name string
			args []string
			exit int
			line string
		}{
			{"no argument", nil, 2, "publish.sh: usage: scripts/publish.sh REPOSITORY (a repository name without tag, e.g. 127.0.0.1:5311/pid1-buildpacks/init)"},
			{"a registry that does not answer", []string{"127.0.0.1:1/pid1-it/init"}, 1, "publish: registry 127.0.0.1:1 does not answer: "},
			{"a docker:// reference", []string{"docker://" + registryAddr() + "/pid1-it/init"}, 2, `publish: invalid repository "docker://`},
			{"a reference with a tag", []string{registryAddr() + "/pid1-it/init:0.1.0"}, 2, `publish: invalid repository "` + registryAddr() + `/pid1-it/init:0.1.0": expected a repository name without tag or digest`},
		}
		for _, c := range cases {
			it("refuses "+c.name, func() {
				r := publish(c.args...)
				t.Logf("scripts/publish.sh %s: exit %d: %s", strings.Join(c.args, " "), r.ExitCode, strings.TrimSpace(r.Output))
				Expect(r.ExitCode).To(Equal(c.exit))
				Expect(strings.Split(strings.TrimSpace(r.Output), "\n")).To(HaveLen(1), r.Output)
				Expect(r.Output).To(HavePrefix(c.line))
			})
		}

		it("refuses a version that exists under another digest, and moves no tag", func() {
			taken := release.Repository + "-taken"
			other := taken + ":" + release.Version
			docker(t, "tag", "pid1-buildpacks/run:busybox", other)
			docker(t, "push", other)
			docker(t, "rmi", other)
			before := registryDigest(t, taken, release.Version)

			r := publish(taken)
			t.Logf("scripts/publish.sh %s: exit %d:\n%s", taken, r.ExitCode, r.Output)
			Expect(r.ExitCode).To(Equal(1))
			Expect(errorLines(r.Output)).To(HaveLen(1), r.Output)
			Expect(errorLines(r.Output)[0]).To(MatchRegexp(`^publish: %s already exists as %s and this build is sha256:[0-9a-f]{64}: a published version does not change; raise the version in buildpack.toml$`,
				regexp.QuoteMeta(other), before))
			Expect(registryTags(t, taken)).To(Equal([]string{release.Version}))
			Expect(registryDigest(t, taken, release.Version)).To(Equal(before))
		})
	})

	it("builds with a builder whose [[buildpacks]] uri pins the image by digest, last in every group", func() {
		releaseBuilder(t, builderByDigest, "builder.toml by digest", true)
		image := "pid1-it/release-digest:latest"
		mustPackBuild(t, image, builderByDigest)
		expectWrapped(t, image)
	})

	it("builds with a builder that has the image by version as a [system.post] buildpack", func() {
		releaseBuilder(t, builderSystem, "builder.toml by version", false)
		image := "pid1-it/release-system:latest"
		mustPackBuild(t, image, builderSystem)
		expectWrapped(t, image)
	})

	it("appends the image with pack build --buildpack IMAGE:VERSION (the snippet of docs/releases.md)", func() {
		image := "pid1-it/release-appended:latest"
		snippet := fromDocs(docSnippet(t, "pack build --buildpack image"))
		Expect(snippet).To(ContainSubstring(release.Repository + ":" + release.Version))
		r := runSnippet(t, strings.Replace(snippet, "my-app", image, 1))
		t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", image).Run() })
		Expect(r.ExitCode).To(Equal(0), r.Output)
		expectWrapped(t, image)
	})

	it("reuses the init layer on a rebuild after the same version is published again and fetched anew", func() {
		releaseBuilder(t, builderSystem, "builder.toml by version", false)
		image := "pid1-it/release-rebuild:latest"
		first := mustPackBuild(t, image, builderSystem)
		firstSHA := initLayerSHA(t, image)
		Expect(first.Output).To(ContainSubstring("Adding layer '" + initBuildpackID + ":init'"))

		again := runSnippet(t, fromDocs(docSnippet(t, "publish")))
		Expect(again.ExitCode).To(Equal(0), again.Output)
		Expect(strings.TrimSpace(again.Stdout)).To(Equal(release.Digest), "the same sources give the same digest")
		t.Logf("published again in %v: %s", again.Duration.Round(10*time.Millisecond), strings.TrimSpace(again.Stdout))

		// The builder is made anew from the registry: the daemon's copy of the image goes first.
		docker(t, "rmi", builderSystem)
		removeReleaseImages()
		releaseBuilder(t, builderSystem, "builder.toml by version", false)
		second := mustPackBuild(t, image, builderSystem)
		secondSHA := initLayerSHA(t, image)
		t.Logf("init layer: first build %s, rebuild %s", firstSHA, secondSHA)
		Expect(second.Output).To(ContainSubstring("Reusing layer '" + initBuildpackID + ":init'"))
		Expect(secondSHA).To(Equal(firstSHA))
	})

	it("shows what pack v0.40.0 makes of each form of reference", func() {
		ref := release.Repository + ":" + release.Version
		dir := t.TempDir()
		docker := "docker://" + ref
		builderCreate := createBuilder(t, "pid1-it/builder-release-docker-scheme", dir, settings.Root,
			sampleBuilderTOML("[[buildpacks]]\n  uri = \""+docker+"\"\n", true))
		buildpackFlag := packBuild(t, "pid1-it/release-docker-scheme:latest", builderWithout,
			"--buildpack", "from=builder", "--buildpack", docker, "--pull-policy", "if-not-present", "--trust-extra-buildpacks")
		noPort := packBuild(t, "pid1-it/release-no-port:latest", builderWithout,
			"--buildpack", "from=builder", "--buildpack", "docker://pid1-it.invalid/init:"+release.Version, "--pull-policy", "if-not-present", "--trust-extra-buildpacks")
		bareNoPort := packBuild(t, "pid1-it/release-bare-no-port:latest", builderWithout,
			"--buildpack", "from=builder", "--buildpack", "pid1-it.invalid/init:"+release.Version, "--pull-policy", "if-not-present", "--trust-extra-buildpacks")
		// A tag no build pulled into the daemon.
		never := createBuilder(t, "pid1-it/builder-release-never", t.TempDir(), settings.Root,
			sampleBuilderTOML("[[buildpacks]]\n  uri = \""+release.Repository+":latest\"\n", true), "--pull-policy", "never")

		for _, c := range []struct {
			what string
			r    result
			want string
		}{
			{"builder.toml uri docker://HOST:PORT/...", builderCreate, "unsupported protocol 'docker' in URI '" + docker + "'"},
			{"--buildpack docker://HOST:PORT/...", buildpackFlag, "unsupported protocol 'docker' in URI '" + docker + "'"},
			{"--buildpack docker://HOST/... (no port): parsed, then fetched", noPort, "extracting from registry 'docker://pid1-it.invalid/init:" + release.Version + "'"},
			{"--buildpack HOST/... (no port, no scheme): parsed, then fetched", bareNoPort, "extracting from registry 'pid1-it.invalid/init:" + release.Version + "'"},
			{"pack builder create --pull-policy never", never, "image '" + release.Repository + ":latest' does not exist on the daemon: not found"},
		} {
			t.Logf("%s: exit %d: %s", c.what, c.r.ExitCode, lastLine(c.r.Output))
			Expect(c.r.ExitCode).NotTo(Equal(0), c.what)
			Expect(c.r.Output).To(ContainSubstring(c.want), c.what)
		}
	})

	it("names the same image and buildpack in the kpack example as in builder.toml", func() {
		var store, builder struct {
			Kind string `yaml:"kind"`
			Spec struct {
				Sources []struct {
					Image string `yaml:"image"`
				} `yaml:"sources"`
				Store struct {
					Name string `yaml:"name"`
				} `yaml:"store"`
				Order []struct {
					Group []struct {
						ID string `yaml:"id"`
					} `yaml:"group"`
				} `yaml:"order"`
			} `yaml:"spec"`
			Metadata struct {
				Name string `yaml:"name"`
			} `yaml:"metadata"`
		}
		docs := strings.Split(docSnippet(t, "kpack"), "\n---\n")
		Expect(docs).To(HaveLen(2))
		Expect(yaml.Unmarshal([]byte(docs[0]), &store)).To(Succeed())
		Expect(yaml.Unmarshal([]byte(docs[1]), &builder)).To(Succeed())
		Expect(store.Kind).To(Equal("ClusterStore"))
		Expect(builder.Kind).To(Equal("ClusterBuilder"))
		Expect(builder.Spec.Store.Name).To(Equal(store.Metadata.Name))

		uri := regexp.MustCompile(`uri = "([^"]+)"`).FindStringSubmatch(docSnippet(t, "builder.toml by digest"))[1]
		var images []string
		for _, s := range store.Spec.Sources {
			images = append(images, s.Image)
		}
		Expect(images).To(ContainElement(uri))
		// The image the kpack example names is the one the builder above was made from.
		Expect(fromDocs(uri)).To(Equal(release.Repository + "@" + release.Digest))
		Expect(builder.Spec.Order).NotTo(BeEmpty())
		for _, o := range builder.Spec.Order {
			Expect(o.Group[len(o.Group)-1].ID).To(Equal(initBuildpackID))
		}
	})
}

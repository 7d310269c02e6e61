package release_test

import (
	"bytes"
	"net"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"

	"github.com/pid1-buildpacks/init/internal/release"
)

func testPublish(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	var (
		repo      name.Repository
		publisher release.Publisher
		log       bytes.Buffer
	)
	it.Before(func() {
		repo = newRegistry(t)
		log.Reset()
		publisher = release.Publisher{Repository: repo, Log: &log}
	})

	both := func(contents string) []v1.Image {
		amd64, arm64 := forArch("amd64"), forArch("arm64")
		amd64.Contents, arm64.Contents = contents, contents
		return []v1.Image{amd64.image(t), arm64.image(t)}
	}
	tagged := func(tag string) string {
		desc, err := remote.Head(repo.Tag(tag))
		if err != nil {
			return "none"
		}
		return desc.Digest.String()
	}
	tags := func() []string {
		list, err := remote.List(repo)
		if err != nil {
			return nil
		}
		return list
	}

	it("pushes one index for both platforms and tags it VERSION, MAJOR.MINOR, MAJOR and latest", func() {
		digest, err := publisher.Publish("0.1.0", both("a"))
		Expect(err).NotTo(HaveOccurred())
		for _, tag := range []string{"0.1.0", "0.1", "0", "latest"} {
			Expect(tagged(tag)).To(Equal(digest.String()), tag)
		}
		index, err := remote.Index(repo.Digest(digest.String()))
		Expect(err).NotTo(HaveOccurred())
		manifest, err := index.IndexManifest()
		Expect(err).NotTo(HaveOccurred())
		Expect(manifest.MediaType).To(BeEquivalentTo("application/vnd.oci.image.index.v1+json"))
		var platforms []string
		for _, m := range manifest.Manifests {
			Expect(m.MediaType).To(BeEquivalentTo("application/vnd.oci.image.manifest.v1+json"))
			platforms = append(platforms, m.Platform.String())
		}
		Expect(platforms).To(ConsistOf("linux/amd64", "linux/arm64"))
		Expect(log.String()).To(ContainSubstring("checked linux/arm64"))
		Expect(log.String()).To(ContainSubstring("bin/build, bin/detect, bin/init built for EM_AARCH64"))
	})

	it("publishes the same build again with the same digest", func() {
		first, err := publisher.Publish("0.1.0", both("a"))
		Expect(err).NotTo(HaveOccurred())
		again, err := publisher.Publish("0.1.0", both("a"))
		Expect(err).NotTo(HaveOccurred())
		Expect(again).To(Equal(first))
	})

	it("refuses a version published under another digest, and moves no tag", func() {
		first, err := publisher.Publish("0.1.0", both("a"))
		Expect(err).NotTo(HaveOccurred())
		_, err = publisher.Publish("0.1.0", both("b"))
		Expect(err).To(MatchError(MatchRegexp(`^%s:0.1.0 already exists as sha256:[0-9a-f]{64} and this build is sha256:[0-9a-f]{64}: a published version does not change; raise the version in buildpack.toml$`, repo)))
		for _, tag := range []string{"0.1.0", "0.1", "0", "latest"} {
			Expect(tagged(tag)).To(Equal(first.String()), tag)
		}
	})

	it("moves the floating tags forward only", func() {
		newer, err := publisher.Publish("0.2.0", both("new"))
		Expect(err).NotTo(HaveOccurred())
		older, err := publisher.Publish("0.1.1", both("old"))
		Expect(err).NotTo(HaveOccurred())
		Expect(tagged("0.1")).To(Equal(older.String()))
		Expect(tagged("0")).To(Equal(newer.String()))
		Expect(tagged("latest")).To(Equal(newer.String()))
	})

	context("when a platform's image is wrong, nothing is tagged", func() {
		wrong := forArch("arm64")
		wrong.Targets = []string{"linux/amd64", "linux/arm64"}
		it("a package declaring more than it holds", func() {
			_, err := publisher.Publish("0.1.0", []v1.Image{forArch("amd64").image(t), wrong.image(t)})
			Expect(err).To(MatchError("the linux/arm64 image: buildpack pid1-buildpacks/init@0.1.0 declares targets [linux/amd64 linux/arm64], expected only linux/arm64"))
			Expect(tags()).To(BeEmpty())
		})
		it("two packages for one platform", func() {
			_, err := publisher.Publish("0.1.0", []v1.Image{forArch("amd64").image(t), forArch("amd64").image(t)})
			Expect(err).To(MatchError("two images for linux/amd64"))
			Expect(tags()).To(BeEmpty())
		})
		it("an invalid version", func() {
			_, err := publisher.Publish("0.1", both("a"))
			Expect(err).To(MatchError(ContainSubstring(`invalid version "0.1"`)))
			Expect(tags()).To(BeEmpty())
		})
	})

	it("Verify reads the index back from the registry and refuses a platform holding another's binaries", func() {
		// Pushed around Publish's own checks, as a registry that served other content would.
		wrong := forArch("arm64")
		wrong.Machine = forArch("amd64").Machine
		index := mutate.AppendManifests(empty.Index,
			mutate.IndexAddendum{Add: forArch("amd64").image(t), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}},
			mutate.IndexAddendum{Add: wrong.image(t), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}})
		digest, err := index.Digest()
		Expect(err).NotTo(HaveOccurred())
		Expect(remote.WriteIndex(repo.Digest(digest.String()), index)).To(Succeed())

		err = publisher.Verify(digest, []string{"linux/amd64", "linux/arm64"})
		Expect(err).To(MatchError(ContainSubstring("is built for EM_X86_64 (amd64), expected EM_AARCH64 for linux/arm64")))
		Expect(publisher.Verify(digest, []string{"linux/amd64"})).To(MatchError(ContainSubstring("linux/arm64 image")))
	})

	it("says when the registry does not answer", func() {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		addr := l.Addr().String()
		Expect(l.Close()).To(Succeed())
		closed, err := name.NewRepository(addr + "/pid1-buildpacks/init")
		Expect(err).NotTo(HaveOccurred())

		_, err = release.Publisher{Repository: closed}.Publish("0.1.0", both("a"))
		Expect(err).To(MatchError(HavePrefix("registry " + addr + " does not answer: ")))
	})
}

package release_test

import (
	"archive/tar"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"

	"github.com/pid1-buildpacks/init/internal/release"
)

func testReadPackage(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	// writeCNB writes the OCI layout in dir as a tar archive, the way pack writes .cnb files.
	writeCNB := func(dir, path string) {
		f, err := os.Create(path)
		Expect(err).NotTo(HaveOccurred())
		defer f.Close()
		tw := tar.NewWriter(f)
		Expect(tw.AddFS(os.DirFS(dir))).To(Succeed())
		Expect(tw.Close()).To(Succeed())
	}

	it("reads the one image of a .cnb file", func() {
		tmp := t.TempDir()
		img := forArch("arm64").image(t)
		p, err := layout.Write(filepath.Join(tmp, "layout"), empty.Index)
		Expect(err).NotTo(HaveOccurred())
		Expect(p.AppendImage(img)).To(Succeed())
		writeCNB(filepath.Join(tmp, "layout"), filepath.Join(tmp, "bp.cnb"))

		read, err := release.ReadPackage(filepath.Join(tmp, "bp.cnb"), tmp)
		Expect(err).NotTo(HaveOccurred())
		Expect(read.Digest()).To(Equal(must(img.Digest())))
	})

	it("refuses a file that holds two images", func() {
		tmp := t.TempDir()
		index := mutate.AppendManifests(empty.Index,
			mutate.IndexAddendum{Add: forArch("amd64").image(t)}, mutate.IndexAddendum{Add: forArch("arm64").image(t)})
		_, err := layout.Write(filepath.Join(tmp, "layout"), index)
		Expect(err).NotTo(HaveOccurred())
		writeCNB(filepath.Join(tmp, "layout"), filepath.Join(tmp, "two.cnb"))

		_, err = release.ReadPackage(filepath.Join(tmp, "two.cnb"), tmp)
		Expect(err).To(MatchError(ContainSubstring("two.cnb holds 2 images: expected one")))
	})

	it("refuses a file that is not an OCI layout", func() {
		tmp := t.TempDir()
		Expect(os.WriteFile(filepath.Join(tmp, "x.cnb"), []byte("not a tar"), 0o644)).To(Succeed())
		_, err := release.ReadPackage(filepath.Join(tmp, "x.cnb"), tmp)
		Expect(err).To(MatchError(ContainSubstring("x.cnb")))
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

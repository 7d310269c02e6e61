package audit

import (
	"archive/tar"
	"bytes"
	"io"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
	"github.com/sclevine/spec/report"

	"github.com/google/go-containerregistry/pkg/v1/empty"
)

func TestSaved(t *testing.T) {
	spec.Run(t, "docker save stream", testSaved, spec.Report(report.Terminal{}))
}

// testSaved reads docker save streams in the legacy layout Docker 20.10 writes: the manifest
// last, a layer seen twice linked.
func testSaved(t *testing.T, context spec.G, it spec.S) {
	Expect := NewWithT(t).Expect

	tarOf := func(entries ...*tar.Header) []byte {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, h := range entries {
			content := h.Linkname
			if h.Typeflag == tar.TypeReg {
				h.Size, h.Linkname = int64(len(content)), ""
			}
			must(tw.WriteHeader(h))
			if h.Typeflag == tar.TypeReg {
				_, err := tw.Write([]byte(content))
				must(err)
			}
		}
		must(tw.Close())
		return buf.Bytes()
	}
	// file is a regular file whose contents are carried in Linkname until tarOf writes it.
	file := func(name, content string) *tar.Header {
		return &tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0644, Linkname: content}
	}
	lower := tarOf(file("cnb/build-config/env/BP_INIT_ENABLED.override", "false"), file("cnb/order.toml", "[[order]]"))
	upper := tarOf(file("cnb/build-config/env/.wh.BP_INIT_ENABLED.override", ""))
	manifest := `[{"Config":"c.json","Layers":["aaa/layer.tar","bbb/layer.tar","ccc/layer.tar"]}]`
	stream := tarOf(
		file("aaa/layer.tar", string(lower)),
		file("bbb/layer.tar", string(upper)),
		&tar.Header{Name: "ccc/layer.tar", Typeflag: tar.TypeSymlink, Linkname: "../aaa/layer.tar"},
		file("c.json", "{}"),
		file("manifest.json", manifest),
	)

	// read applies the layers of a docker save stream.
	read := func(stream []byte) (builderFS, error) {
		img := savedImage{Image: empty.Image, save: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(stream)), nil }}
		return readBuilderFS(img, lifecycleFiles)
	}

	it("applies the layers in the manifest's order, a linked layer again", func() {
		fs, err := read(stream)
		Expect(err).NotTo(HaveOccurred())
		// The lower layer comes back above the whiteout.
		contents, ok, err := fs.file("cnb/build-config/env/BP_INIT_ENABLED.override")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(string(contents)).To(Equal("false"))
	})

	it("removes what a whiteout of a later layer names", func() {
		short := tarOf(file("aaa/layer.tar", string(lower)), file("bbb/layer.tar", string(upper)),
			file("manifest.json", `[{"Layers":["aaa/layer.tar","bbb/layer.tar"]}]`))
		fs, err := read(short)
		Expect(err).NotTo(HaveOccurred())
		_, ok, err := fs.file("cnb/build-config/env/BP_INIT_ENABLED.override")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse())
		Expect(fs.isDir("cnb/build-config/env")).To(BeFalse())
		_, ok, _ = fs.file("cnb/order.toml")
		Expect(ok).To(BeTrue())
	})

	it("names a layer the manifest lists and the stream lacks", func() {
		broken := tarOf(file("manifest.json", `[{"Layers":["zzz/layer.tar"]}]`))
		_, err := read(broken)
		Expect(err).To(MatchError("unable to read layer 1 of the image: zzz/layer.tar is not in the stream"))
	})
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

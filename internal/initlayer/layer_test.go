package initlayer_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/buildpacks/libcnb/v2"
	"github.com/heroku/color"
	. "github.com/onsi/gomega"
	"github.com/paketo-buildpacks/libpak/v2/log"
	"github.com/sclevine/spec"
	"github.com/sclevine/spec/report"

	"github.com/pid1-buildpacks/init/internal/initlayer"
)

func TestUnit(t *testing.T) {
	color.Disable(true)
	suite := spec.New("initlayer", spec.Report(report.Terminal{}))
	suite("Contributor", testContributor)
	suite.Run(t)
}

func testContributor(t *testing.T, context spec.G, it spec.S) {
	var (
		Expect = NewWithT(t).Expect
		layers libcnb.Layers
		source string
		out    *bytes.Buffer
		info   = libcnb.BuildpackInfo{ID: "pid1-buildpacks/init", Version: "0.1.0", Licenses: []libcnb.License{{Type: "Apache-2.0"}}}
	)

	it.Before(func() {
		layers = libcnb.Layers{Path: t.TempDir()}
		source = filepath.Join(t.TempDir(), "init")
		Expect(os.WriteFile(source, []byte("fake init, version 1"), 0600)).To(Succeed())
		out = &bytes.Buffer{}
	})

	sum := func(content string) string {
		s := sha256.Sum256([]byte(content))
		return hex.EncodeToString(s[:])
	}

	// contribute runs the contributor as libcnb does, and writes <layer>.toml the way libcnb's
	// build does afterwards.
	contribute := func() libcnb.Layer {
		c, err := initlayer.NewContributor(source, info, "amd64", log.NewPaketoLogger(out))
		Expect(err).NotTo(HaveOccurred())
		layer, err := layers.Layer(c.Name())
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Contribute(&layer)).To(Succeed())

		f, err := os.Create(filepath.Join(layers.Path, "init.toml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(toml.NewEncoder(f).Encode(layer)).To(Succeed())
		Expect(f.Close()).To(Succeed())
		return layer
	}

	it("copies the init to sbin/init of a launch-only layer whose metadata is its sha256 and path", func() {
		layer := contribute()

		Expect(layer.Name).To(Equal("init"))
		Expect(layer.LayerTypes).To(Equal(libcnb.LayerTypes{Launch: true}))
		Expect(layer.Metadata).To(Equal(map[string]interface{}{"sha256": sum("fake init, version 1"), "path": "sbin/init"}))

		bin := filepath.Join(layers.Path, "init", "sbin", "init")
		Expect(initlayer.BinaryPath(layer.Path)).To(Equal(bin))
		Expect(os.ReadFile(bin)).To(Equal([]byte("fake init, version 1")))
		fi, err := os.Stat(bin)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0755)))

		Expect(out.String()).To(ContainSubstring("PID 1 init"))
		Expect(out.String()).To(ContainSubstring("Contributing to layer"))
		// The launcher adds <layer>/bin to PATH and <layer>/lib to LD_LIBRARY_PATH: the layer
		// has neither, nor env/, profile.d/ or exec.d/.
		entries, err := os.ReadDir(layer.Path)
		Expect(err).NotTo(HaveOccurred())
		Expect(entries).To(HaveLen(1))
		Expect(entries[0].Name()).To(Equal("sbin"))
		Expect(initlayer.FormerBinaryPath(layer.Path)).To(Equal(filepath.Join(layers.Path, "init", "bin", "init")))
	})

	it("writes CycloneDX and Syft SBOMs naming the init and its digest", func() {
		contribute()

		var cdx map[string]interface{}
		data, err := os.ReadFile(filepath.Join(layers.Path, "init.sbom.cdx.json"))
		Expect(err).NotTo(HaveOccurred())
		Expect(json.Unmarshal(data, &cdx)).To(Succeed())
		Expect(cdx["bomFormat"]).To(Equal("CycloneDX"))
		components := cdx["components"].([]interface{})
		Expect(components).To(HaveLen(1))
		component := components[0].(map[string]interface{})
		Expect(component["name"]).To(Equal("pid1-init"))
		Expect(component["version"]).To(Equal("0.1.0"))
		Expect(component["purl"]).To(Equal("pkg:generic/pid1-buildpacks/init@0.1.0?arch=amd64"))
		Expect(component["hashes"]).To(Equal([]interface{}{map[string]interface{}{"alg": "SHA-256", "content": sum("fake init, version 1")}}))

		var syft struct {
			Artifacts []struct {
				Name      string
				Version   string
				PURL      string
				Licenses  []string
				Locations []struct{ Path string }
			}
			Source struct{ Type, Target string }
		}
		data, err = os.ReadFile(filepath.Join(layers.Path, "init.sbom.syft.json"))
		Expect(err).NotTo(HaveOccurred())
		Expect(json.Unmarshal(data, &syft)).To(Succeed())
		Expect(syft.Artifacts).To(HaveLen(1))
		Expect(syft.Artifacts[0].Name).To(Equal("pid1-init"))
		Expect(syft.Artifacts[0].PURL).To(Equal("pkg:generic/pid1-buildpacks/init@0.1.0?arch=amd64"))
		Expect(syft.Artifacts[0].Licenses).To(Equal([]string{"Apache-2.0"}))
		Expect(syft.Artifacts[0].Locations[0].Path).To(Equal("sbin/init"))
		Expect(syft.Source.Target).To(Equal(filepath.Join(layers.Path, "init")))
	})

	context("on a rebuild, where the lifecycle restored only init.toml of the launch layer", func() {
		it.Before(func() {
			contribute()
			Expect(os.RemoveAll(filepath.Join(layers.Path, "init"))).To(Succeed())
			for _, f := range []string{"init.sbom.cdx.json", "init.sbom.syft.json"} {
				Expect(os.Remove(filepath.Join(layers.Path, f))).To(Succeed())
			}
			out.Reset()
		})

		it("reuses the layer when the init is unchanged and still writes identical SBOMs", func() {
			first := contribute()
			Expect(out.String()).To(ContainSubstring("Reusing cached layer"))
			Expect(filepath.Join(layers.Path, "init")).NotTo(BeADirectory()) // the exporter reuses the previous image's layer
			Expect(first.LayerTypes).To(Equal(libcnb.LayerTypes{Launch: true}))
			Expect(first.Metadata).To(Equal(map[string]interface{}{"sha256": sum("fake init, version 1"), "path": "sbin/init"}))
			Expect(filepath.Join(layers.Path, "init.sbom.cdx.json")).To(BeARegularFile())
			Expect(filepath.Join(layers.Path, "init.sbom.syft.json")).To(BeARegularFile())

			cdx1, _ := os.ReadFile(filepath.Join(layers.Path, "init.sbom.cdx.json"))
			syft1, _ := os.ReadFile(filepath.Join(layers.Path, "init.sbom.syft.json"))
			contribute()
			Expect(os.ReadFile(filepath.Join(layers.Path, "init.sbom.cdx.json"))).To(Equal(cdx1))
			Expect(os.ReadFile(filepath.Join(layers.Path, "init.sbom.syft.json"))).To(Equal(syft1))
		})

		it("contributes the layer again when the init changed", func() {
			Expect(os.WriteFile(source, []byte("fake init, version 2"), 0600)).To(Succeed())
			layer := contribute()
			Expect(out.String()).To(ContainSubstring("Contributing to layer"))
			Expect(out.String()).NotTo(ContainSubstring("Reusing"))
			Expect(os.ReadFile(filepath.Join(layers.Path, "init", "sbin", "init"))).To(Equal([]byte("fake init, version 2")))
			Expect(layer.Metadata).To(Equal(map[string]interface{}{"sha256": sum("fake init, version 2"), "path": "sbin/init"}))
		})

		it("contributes the layer again when the previous image's layer has the same init at bin/init", func() {
			// init.toml as an earlier version of the buildpack wrote it: the sha256 alone.
			Expect(os.WriteFile(filepath.Join(layers.Path, "init.toml"),
				[]byte("[types]\n  launch = true\n[metadata]\n  sha256 = \""+sum("fake init, version 1")+"\"\n"), 0644)).To(Succeed())
			contribute()
			Expect(out.String()).To(ContainSubstring("Contributing to layer"))
			Expect(out.String()).NotTo(ContainSubstring("Reusing"))
			Expect(filepath.Join(layers.Path, "init", "sbin", "init")).To(BeARegularFile())
		})
	})

	it("fails naming a missing init", func() {
		_, err := initlayer.NewContributor(filepath.Join(t.TempDir(), "missing"), info, "amd64", log.NewDiscardLogger())
		Expect(err).To(MatchError(ContainSubstring("unable to open")))
		Expect(err.Error()).To(ContainSubstring("missing"))
	})
}

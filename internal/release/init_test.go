package release_test

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/sclevine/spec"
	"github.com/sclevine/spec/report"
)

func TestUnit(t *testing.T) {
	suite := spec.New("release", spec.Report(report.Terminal{}))
	suite("Tags", testTags)
	suite("CheckPlatform", testCheckPlatform)
	suite("ReadPackage", testReadPackage)
	suite("Publish", testPublish)
	suite("ReleaseNotes", testReleaseNotes)
	suite.Run(t)
}

// fakeBuildpack describes a buildpack image to make: what it declares and what it holds.
type fakeBuildpack struct {
	Arch     string      // the image configuration's architecture
	Machine  elf.Machine // the ELF machine of the executables
	Targets  []string    // os/arch targets the buildpack declares
	Omit     string      // an executable to leave out, such as "bin/init"
	Contents string      // anything, to make images of different digests
}

// forArch is a correct buildpack image description for arch (amd64 or arm64).
func forArch(arch string) fakeBuildpack {
	machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
	return fakeBuildpack{Arch: arch, Machine: machine, Targets: []string{"linux/" + arch}}
}

// image makes the buildpack image: a layer with /cnb/buildpacks/<id>/<version>/bin/* (an ELF
// header of the given machine each) and buildpack.toml, and the io.buildpacks.buildpack.layers
// label pack writes.
func (f fakeBuildpack) image(t *testing.T) v1.Image {
	t.Helper()
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	dir := "/cnb/buildpacks/pid1-buildpacks_init/0.1.0/"
	add := func(name string, content []byte) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(content); err != nil {
			t.Fatal(err)
		}
	}
	for _, exe := range []string{"bin/build", "bin/detect", "bin/init"} {
		if exe != f.Omit {
			add(dir+exe, elfHeader(t, f.Machine))
		}
	}
	add(dir+"buildpack.toml", []byte("# "+f.Contents+"\n"))
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(layer.Bytes())), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", f.Arch
	type target struct {
		OS   string `json:"os"`
		Arch string `json:"arch"`
	}
	var targets []target
	for _, t := range f.Targets {
		os, arch, _ := strings.Cut(t, "/")
		targets = append(targets, target{os, arch})
	}
	label, err := json.Marshal(map[string]map[string]any{"pid1-buildpacks/init": {"0.1.0": map[string]any{"api": "0.10", "targets": targets}}})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Config.Labels = map[string]string{"io.buildpacks.buildpack.layers": string(label)}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// elfHeader is the 64-byte header of a little-endian 64-bit ELF executable for machine.
func elfHeader(t *testing.T, machine elf.Machine) []byte {
	t.Helper()
	h := elf.Header64{Type: uint16(elf.ET_EXEC), Machine: uint16(machine), Version: uint32(elf.EV_CURRENT), Ehsize: 64, Phentsize: 56, Shentsize: 64}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	h.Ident[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	h.Ident[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	var b bytes.Buffer
	if err := binary.Write(&b, binary.LittleEndian, h); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// newRegistry serves an in-memory registry until the test ends and returns a repository in it.
func newRegistry(t *testing.T) name.Repository {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	repo, err := name.NewRepository(strings.TrimPrefix(srv.URL, "http://") + "/pid1-buildpacks/init")
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

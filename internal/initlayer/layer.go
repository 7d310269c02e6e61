// Package initlayer contributes the launch layer that holds the init binary, with its SBOM.
package initlayer

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/buildpacks/libcnb/v2"
	"github.com/paketo-buildpacks/libpak/v2"
	"github.com/paketo-buildpacks/libpak/v2/log"
	"github.com/paketo-buildpacks/libpak/v2/sherpa"
)

// LayerName is the name of the launch layer holding the init.
const LayerName = "init"

// BinaryDir is the directory of the layer that holds the init. The launcher prepends every
// launch layer's bin/ to PATH and lib/ to LD_LIBRARY_PATH (lifecycle env.POSIXLaunchEnv); sbin/ is
// neither, so the app's PATH does not find our init when it runs `init` by name.
const BinaryDir = "sbin"

// relativeBinaryPath is where the init is inside its layer.
var relativeBinaryPath = filepath.Join(BinaryDir, "init")

// BinaryPath returns where the init is inside a layer at layerPath.
func BinaryPath(layerPath string) string {
	return filepath.Join(layerPath, relativeBinaryPath)
}

// FormerBinaryPath returns where earlier versions of this buildpack put the init inside the
// layer at layerPath: bin/init, which the launcher put on the app's PATH. A process that starts
// with it already has our init.
func FormerBinaryPath(layerPath string) string {
	return filepath.Join(layerPath, "bin", "init")
}

// Contributor copies the init binary into the launch layer "init" as sbin/init. The layer's
// metadata is the binary's sha256 and path, so an unchanged binary reuses the layer of the previous image.
// The metadata also names that path. It adds nothing to PATH or to the environment.
type Contributor struct {
	// Source is the init binary shipped with the buildpack.
	Source string
	// SHA256 is the hex sha256 of Source.
	SHA256 string
	// Buildpack describes the buildpack, for the SBOM.
	Buildpack libcnb.BuildpackInfo
	// Arch is the architecture the binary was built for, for the SBOM.
	Arch string

	layer  libpak.LayerContributor
	logger log.Logger
}

// NewContributor returns a Contributor for the init binary at source.
func NewContributor(source string, info libcnb.BuildpackInfo, arch string, logger log.Logger) (Contributor, error) {
	sum, err := fileSHA256(source)
	if err != nil {
		return Contributor{}, err
	}
	// The path is part of the metadata so that a layer of an earlier version, with the same binary
	// at bin/init, is not reused where the processes name sbin/init.
	expected := map[string]interface{}{"sha256": sum, "path": relativeBinaryPath}
	return Contributor{
		Source:    source,
		SHA256:    sum,
		Buildpack: info,
		Arch:      arch,
		layer:     libpak.NewLayerContributor("PID 1 init", expected, libcnb.LayerTypes{Launch: true}, logger),
		logger:    logger,
	}, nil
}

// Name returns the layer name.
func (c Contributor) Name() string {
	return LayerName
}

// Contribute fills layer with sbin/init unless the previous image's layer has the same metadata,
// then writes the layer's SBOM files (CycloneDX and Syft JSON) in both cases.
func (c Contributor) Contribute(layer *libcnb.Layer) error {
	err := c.layer.Contribute(layer, func(layer *libcnb.Layer) error {
		in, err := os.Open(c.Source)
		if err != nil {
			return fmt.Errorf("unable to open %s\n%w", c.Source, err)
		}
		defer in.Close()

		out := BinaryPath(layer.Path)
		c.logger.Bodyf("Copying init to %s", out)
		if err := sherpa.CopyFile(in, out); err != nil {
			return fmt.Errorf("unable to copy %s to %s\n%w", c.Source, out, err)
		}
		if err := os.Chmod(out, 0755); err != nil {
			return fmt.Errorf("unable to make %s executable\n%w", out, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return c.writeSBOM(*layer)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("unable to open %s\n%w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("unable to read %s\n%w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

package release

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Executables are the buildpack's programs that every platform's image must hold, built for
// that platform.
var Executables = []string{"bin/build", "bin/detect", "bin/init"}

// machines maps an OCI architecture to the ELF machine its binaries carry.
var machines = map[string]elf.Machine{
	"amd64": elf.EM_X86_64,
	"arm64": elf.EM_AARCH64,
}

// layersLabel is the label of a buildpack image that describes its buildpacks.
const layersLabel = "io.buildpacks.buildpack.layers"

// CheckPlatform checks that img is a buildpack image for platform and holds only that: its
// configuration names the platform, each buildpack in it declares that target and no other,
// and bin/build, bin/detect and bin/init of each buildpack are ELF files for its architecture.
func CheckPlatform(img v1.Image, platform v1.Platform) error {
	want, ok := machines[platform.Architecture]
	if platform.OS != "linux" || !ok {
		return fmt.Errorf("unsupported platform %s: expected linux/amd64 or linux/arm64", platform.String())
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("unable to read the image configuration: %w", err)
	}
	if cfg.OS != platform.OS || cfg.Architecture != platform.Architecture {
		return fmt.Errorf("image configuration names %s/%s, expected %s", cfg.OS, cfg.Architecture, platform.String())
	}
	if err := checkDeclaredTargets(cfg.Config.Labels[layersLabel], platform); err != nil {
		return err
	}

	found, err := executableMachines(img)
	if err != nil {
		return err
	}
	if len(found) == 0 {
		return fmt.Errorf("no buildpack executables (/cnb/buildpacks/*/*/bin/...) in the image")
	}
	var paths []string
	for p := range found {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if found[p] != want {
			return fmt.Errorf("%s is built for %s, expected %s for %s", p, machineName(found[p]), want, platform.String())
		}
	}
	for _, dir := range buildpackDirs(paths) {
		for _, exe := range Executables {
			if _, ok := found[path.Join(dir, exe)]; !ok {
				return fmt.Errorf("%s is missing from the image", path.Join(dir, exe))
			}
		}
	}
	return nil
}

// checkDeclaredTargets checks the targets each buildpack declares in the layers label.
func checkDeclaredTargets(label string, platform v1.Platform) error {
	if label == "" {
		return fmt.Errorf("the image has no %s label: not a buildpack image", layersLabel)
	}
	var buildpacks map[string]map[string]struct {
		Targets []struct {
			OS   string `json:"os"`
			Arch string `json:"arch"`
		} `json:"targets"`
	}
	if err := json.Unmarshal([]byte(label), &buildpacks); err != nil {
		return fmt.Errorf("unable to decode the %s label: %w", layersLabel, err)
	}
	for id, versions := range buildpacks {
		for version, bp := range versions {
			var declared []string
			for _, t := range bp.Targets {
				declared = append(declared, t.OS+"/"+t.Arch)
			}
			if len(declared) != 1 || declared[0] != platform.String() {
				return fmt.Errorf("buildpack %s@%s declares targets [%s], expected only %s", id, version, strings.Join(declared, " "), platform.String())
			}
		}
	}
	return nil
}

// executableMachines returns the ELF machine of every buildpack executable in img's layers, by
// path (without the leading slash).
func executableMachines(img v1.Image) (map[string]elf.Machine, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("unable to list the image's layers: %w", err)
	}
	found := map[string]elf.Machine{}
	for _, layer := range layers {
		digest, _ := layer.Digest()
		rc, err := layer.Uncompressed()
		if err != nil {
			return nil, fmt.Errorf("unable to read layer %s: %w", digest, err)
		}
		err = scanLayer(rc, found)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("layer %s: %w", digest, err)
		}
	}
	return found, nil
}

func scanLayer(r io.Reader, found map[string]elf.Machine) error {
	return eachEntry(r, func(hdr *tar.Header, content io.Reader) error {
		name := strings.TrimPrefix(path.Clean("/"+hdr.Name), "/")
		if hdr.Typeflag != tar.TypeReg || !isExecutable(name) {
			return nil
		}
		b, err := io.ReadAll(content)
		if err != nil {
			return fmt.Errorf("unable to read %s: %w", name, err)
		}
		f, err := elf.NewFile(bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("%s is not an ELF file: %w", name, err)
		}
		found[name] = f.Machine
		return nil
	})
}

// isExecutable tells whether name is cnb/buildpacks/<id>/<version>/bin/{build,detect,init}.
func isExecutable(name string) bool {
	parts := strings.Split(name, "/")
	if len(parts) != 6 || parts[0] != "cnb" || parts[1] != "buildpacks" {
		return false
	}
	for _, exe := range Executables {
		if strings.Join(parts[4:], "/") == exe {
			return true
		}
	}
	return false
}

// buildpackDirs returns cnb/buildpacks/<id>/<version> of each executable path, once each.
func buildpackDirs(paths []string) []string {
	seen := map[string]bool{}
	var dirs []string
	for _, p := range paths {
		dir := path.Dir(path.Dir(p))
		if !seen[dir] {
			seen[dir] = true
			dirs = append(dirs, dir)
		}
	}
	return dirs
}

func machineName(m elf.Machine) string {
	for arch, machine := range machines {
		if machine == m {
			return fmt.Sprintf("%s (%s)", m, arch)
		}
	}
	return m.String()
}

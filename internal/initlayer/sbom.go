package initlayer

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/buildpacks/libcnb/v2"
	"github.com/paketo-buildpacks/libpak/v2/sbom"
)

// componentName is the name the SBOM gives the init.
const componentName = "pid1-init"

// purl returns the package URL of the init binary.
func (c Contributor) purl() string {
	return fmt.Sprintf("pkg:generic/%s@%s?arch=%s", c.Buildpack.ID, c.Buildpack.Version, c.Arch)
}

func (c Contributor) licenses() []string {
	var licenses []string
	for _, l := range c.Buildpack.Licenses {
		if l.Type != "" {
			licenses = append(licenses, l.Type)
		}
	}
	return licenses
}

// writeSBOM writes <layer>.sbom.cdx.json and <layer>.sbom.syft.json describing sbin/init. Their
// content depends only on the buildpack, the architecture and the binary's digest, so a rebuild
// writes the same bytes.
func (c Contributor) writeSBOM(layer libcnb.Layer) error {
	if err := c.writeCycloneDX(layer.SBOMPath(libcnb.CycloneDXJSON)); err != nil {
		return err
	}
	return c.writeSyft(layer)
}

type cdxHash struct {
	Alg     string `json:"alg"`
	Content string `json:"content"`
}

type cdxLicense struct {
	License struct {
		ID string `json:"id"`
	} `json:"license"`
}

type cdxComponent struct {
	BOMRef   string       `json:"bom-ref"`
	Type     string       `json:"type"`
	Name     string       `json:"name"`
	Version  string       `json:"version"`
	PURL     string       `json:"purl"`
	Hashes   []cdxHash    `json:"hashes"`
	Licenses []cdxLicense `json:"licenses,omitempty"`
}

type cdxDocument struct {
	BOMFormat   string         `json:"bomFormat"`
	SpecVersion string         `json:"specVersion"`
	Version     int            `json:"version"`
	Components  []cdxComponent `json:"components"`
}

func (c Contributor) writeCycloneDX(path string) error {
	component := cdxComponent{
		BOMRef:  c.purl(),
		Type:    "application",
		Name:    componentName,
		Version: c.Buildpack.Version,
		PURL:    c.purl(),
		Hashes:  []cdxHash{{Alg: "SHA-256", Content: c.SHA256}},
	}
	for _, id := range c.licenses() {
		var l cdxLicense
		l.License.ID = id
		component.Licenses = append(component.Licenses, l)
	}
	doc := cdxDocument{BOMFormat: "CycloneDX", SpecVersion: "1.4", Version: 1, Components: []cdxComponent{component}}

	data, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("unable to encode CycloneDX SBOM\n%w", err)
	}
	// #nosec G306 -- the lifecycle reads SBOM files as another user
	if err := os.WriteFile(path, data, 0644); err != nil {
		return fmt.Errorf("unable to write %s\n%w", path, err)
	}
	return nil
}

func (c Contributor) writeSyft(layer libcnb.Layer) error {
	artifact := sbom.SyftArtifact{
		Name:      componentName,
		Version:   c.Buildpack.Version,
		Type:      "UnknownPackage",
		FoundBy:   c.Buildpack.ID,
		Locations: []sbom.SyftLocation{{Path: relativeBinaryPath}},
		Licenses:  c.licenses(),
		CPEs:      []string{fmt.Sprintf("cpe:2.3:a:%s:%s:%s:*:*:*:*:*:*:*", "pid1-buildpacks", componentName, c.Buildpack.Version)},
		PURL:      c.purl(),
	}
	id, err := artifact.Hash()
	if err != nil {
		return fmt.Errorf("unable to identify the init in the Syft SBOM\n%w", err)
	}
	artifact.ID = id

	path := layer.SBOMPath(libcnb.SyftJSON)
	if err := sbom.NewSyftDependency(layer.Path, []sbom.SyftArtifact{artifact}).WriteTo(path); err != nil {
		return fmt.Errorf("unable to write %s\n%w", path, err)
	}
	return nil
}

package audit

import (
	"archive/tar"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// LifecycleMetadataLabel is the label in which the lifecycle's exporter records the layer
// (its diff ID) of the launcher and of each buildpack layer of an app image.
const LifecycleMetadataLabel = "io.buildpacks.lifecycle.metadata"

// lifecycleMetadata is the part of io.buildpacks.lifecycle.metadata the audit reads.
type lifecycleMetadata struct {
	Launcher struct {
		SHA string `json:"sha"`
	} `json:"launcher"`
	Buildpacks []struct {
		Key    string `json:"key"`
		Layers map[string]struct {
			SHA string `json:"sha"`
		} `json:"layers"`
	} `json:"buildpacks"`
}

// layerOf returns the diff ID the exporter recorded for layer name of buildpack id, "" if none.
func (m lifecycleMetadata) layerOf(id, name string) string {
	for _, bp := range m.Buildpacks {
		if bp.Key == id {
			return bp.Layers[name].SHA
		}
	}
	return ""
}

// auditExported returns why the file at p (what names it) is not the one the lifecycle
// exported: it is missing, not a regular file, or written by a layer other than the one whose
// diff ID the exporter recorded (diffID, "" when the label records none), such as a layer that
// a docker build added on top.
func auditExported(fs builderFS, cfg *v1.ConfigFile, p, what, diffID string) string {
	resolved, err := fs.resolve(p)
	if err != nil {
		return fmt.Sprintf("%s %s: %v", what, p, err)
	}
	e, ok := fs.entries[resolved]
	switch {
	case !ok:
		return fmt.Sprintf("%s %s is not in the image: the container cannot start it", what, p)
	case e.Type != tar.TypeReg && e.Type != tar.TypeLink:
		return fmt.Sprintf("%s %s is not a regular file", what, p)
	case diffID == "" || e.Layer >= len(cfg.RootFS.DiffIDs):
		return ""
	case cfg.RootFS.DiffIDs[e.Layer].String() != diffID:
		return fmt.Sprintf("%s %s is written by layer %d (%s), not by the layer the lifecycle exported (%s, label %s): it is not the file the build put there",
			what, p, e.Layer+1, cfg.RootFS.DiffIDs[e.Layer], diffID, LifecycleMetadataLabel)
	}
	return ""
}

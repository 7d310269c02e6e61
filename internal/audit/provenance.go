package audit

import (
	"archive/tar"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/pid1-buildpacks/init/internal/launch"
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
// diff ID label records (diffID, "" when it records none), such as a layer that
// a docker build added on top.
func auditExported(fs builderFS, cfg *v1.ConfigFile, p, what, diffID, label string) string {
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
		return fmt.Sprintf("%s %s is written by layer %d (%s), not by the layer label %s records (%s): it is not the file the build put there",
			what, p, e.Layer+1, cfg.RootFS.DiffIDs[e.Layer], label, diffID)
	}
	return ""
}

// BuildpackLayersLabel is the label in which pack records the layer (its diff ID) of each
// buildpack of a builder.
const BuildpackLayersLabel = "io.buildpacks.buildpack.layers"

// auditInitBuildpack returns why the init buildpack the order and [system] name is not the one
// pack put in the builder: for each version (every one the label names, for an entry without a
// version), its bin/detect, bin/build and buildpack.toml must be there, and they and every
// other file under its directory (the init binary) written by the layer the label records for it. A builder without the label or without layers (made for a test) is not checked.
func auditInitBuildpack(fs builderFS, cfg *v1.ConfigFile, in builderInputs) ([]string, error) {
	var layers map[string]map[string]struct {
		LayerDiffID string `json:"layerDiffID"`
	}
	if ok, err := decodeLabel(cfg.Config.Labels, BuildpackLayersLabel, &layers); err != nil || !ok || len(cfg.RootFS.DiffIDs) == 0 {
		return nil, err
	}
	versions := map[string]bool{}
	var refs []buildpackRef
	for _, g := range in.order {
		refs = append(refs, g.Group...)
	}
	refs = append(append(refs, in.system.Pre.Buildpacks...), in.system.Post.Buildpacks...)
	for _, bp := range refs {
		if bp.ID != InitBuildpackID {
			continue
		}
		if bp.Version != "" {
			versions[bp.Version] = true
			continue
		}
		for v := range layers[InitBuildpackID] {
			versions[v] = true
		}
	}
	var problems []string
	for _, v := range slices.Sorted(maps.Keys(versions)) {
		diffID := layers[InitBuildpackID][v].LayerDiffID
		if diffID == "" {
			problems = append(problems, fmt.Sprintf("label %s names no layer for %s@%s: the builder does not hold it", BuildpackLayersLabel, InitBuildpackID, v))
			continue
		}
		dir := path.Join("/cnb/buildpacks", launch.EscapeID(InitBuildpackID), v)
		for _, f := range []string{"buildpack.toml", "bin/detect", "bin/build"} {
			if problem := auditExported(fs, cfg, path.Join(dir, f), InitBuildpackID+"'s", "", BuildpackLayersLabel); problem != "" {
				problems = append(problems, problem)
			}
		}
		// Each file of the buildpack, the init binary it copies into every image too.
		var changed []string
		for name, e := range fs.entries {
			if strings.HasPrefix(name, cleanPath(dir)+"/") && e.Type != tar.TypeDir && e.Layer < len(cfg.RootFS.DiffIDs) && cfg.RootFS.DiffIDs[e.Layer].String() != diffID {
				changed = append(changed, "/"+name)
			}
		}
		for _, name := range slices.Sorted(slices.Values(changed)) {
			problems = append(problems, fmt.Sprintf("%s's %s is written by layer %d (%s), not by the layer label %s records (%s): it is not the file pack put there",
				InitBuildpackID, name, fs.entries[cleanPath(name)].Layer+1, cfg.RootFS.DiffIDs[fs.entries[cleanPath(name)].Layer], BuildpackLayersLabel, diffID))
		}
	}
	return problems, nil
}

package launch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Collection is what the buildpacks that built before this one declared in their launch.toml.
type Collection struct {
	// Sets holds the processes of each earlier buildpack that wrote a launch.toml, in group order.
	Sets [][]Process
	// Ordered is false when group.toml was missing: Sets is then sorted by directory name and the
	// real order of the buildpacks is unknown.
	Ordered bool
	// Later holds the ids of the buildpacks of the group that come after this one, in group
	// order: their process types are not among Sets and cannot be wrapped.
	Later []string
	// Group holds the ids of every buildpack of the group, this one and later ones included, in
	// group order; without group.toml, those of the buildpack directories, sorted by name.
	Group []string
	// Warnings are problems worth telling the user that do not stop the build.
	Warnings []string
}

// Collect reads the launch.toml of every buildpack that built before buildpack ownID, whose layers
// directory is layersDir. The ordered group comes from group.toml next to layersDir; when it is
// missing, every launch.toml present next to layersDir is read instead. A launch.toml that exists
// but cannot be read is an error naming the file.
func Collect(layersDir, ownID string) (Collection, error) {
	root := filepath.Dir(filepath.Clean(layersDir))
	groupPath := filepath.Join(root, "group.toml")

	group, err := ReadGroup(groupPath)
	if errors.Is(err, fs.ErrNotExist) {
		return collectUnordered(root, layersDir, groupPath)
	} else if err != nil {
		return Collection{}, err
	}

	c := Collection{Ordered: true}
	for _, e := range group {
		c.Group = append(c.Group, e.ID)
	}
	earlier := group
	own := -1
	for i, e := range group {
		if e.ID == ownID {
			own = i
			break
		}
	}
	if own < 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%s is not in %s: treating every buildpack of the group as earlier", ownID, groupPath))
	} else {
		earlier = group[:own]
		for _, e := range group[own+1:] {
			c.Later = append(c.Later, e.ID)
		}
	}

	for _, e := range earlier {
		path := filepath.Join(root, EscapeID(e.ID), "launch.toml")
		processes, found, err := readIfPresent(path, e.ID, e.API)
		if err != nil {
			return Collection{}, err
		}
		if !found {
			continue
		}
		if e.API != "" {
			if old, err := apiLessThan(e.API, "0.8"); err == nil && old {
				processes, c.Warnings = dropWorkingDirectory(processes, e, c.Warnings)
			}
		}
		c.Sets = append(c.Sets, processes)
	}
	return c, nil
}

func collectUnordered(root, layersDir, groupPath string) (Collection, error) {
	c := Collection{Warnings: []string{fmt.Sprintf("%s not found: reading every launch.toml in %s; their order is unknown", groupPath, root)}}

	entries, err := os.ReadDir(root)
	if err != nil {
		return Collection{}, fmt.Errorf("unable to list %s\n%w", root, err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		c.Group = append(c.Group, strings.ReplaceAll(e.Name(), "_", "/"))
		if e.Name() != filepath.Base(filepath.Clean(layersDir)) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)

	definedBy := map[string]string{}
	for _, name := range names {
		path := filepath.Join(root, name, "launch.toml")
		processes, found, err := readIfPresent(path, strings.ReplaceAll(name, "_", "/"), "")
		if err != nil {
			return Collection{}, err
		}
		if !found {
			continue
		}
		for _, p := range processes {
			if first, ok := definedBy[p.Type]; ok {
				c.Warnings = append(c.Warnings, fmt.Sprintf("process type %q is defined in %s and in %s: without group.toml their order is unknown, the latter is used", p.Type, first, path))
			}
			definedBy[p.Type] = path
		}
		c.Sets = append(c.Sets, processes)
	}
	return c, nil
}

func readIfPresent(path, id, api string) ([]Process, bool, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, fmt.Errorf("unable to read %s\n%w", path, err)
	}
	processes, err := ReadLaunchTOML(path, id, api)
	if err != nil {
		return nil, false, err
	}
	return processes, true, nil
}

// dropWorkingDirectory clears working-dir as the lifecycle does for Buildpack API 0.7 and older.
func dropWorkingDirectory(processes []Process, e GroupEntry, warnings []string) ([]Process, []string) {
	for i := range processes {
		if processes[i].WorkingDirectory != "" {
			warnings = append(warnings, fmt.Sprintf("process type %q of %s: working-dir is not supported by Buildpack API %s and is ignored, as the lifecycle does", processes[i].Type, e.ID, e.API))
			processes[i].WorkingDirectory = ""
		}
	}
	return processes, warnings
}

package audit

import (
	"fmt"
	"path"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/pid1-buildpacks/init/internal/launch"
)

// launchMetadataFile is where the exporter writes what the launcher reads, under the layers.
const launchMetadataFile = "config/metadata.toml"

// launchProcess is one process type as the launcher reads it.
type launchProcess struct {
	Type    string
	Command []string
	Args    []string
	Direct  bool
	// Array is true for a command written as an array (Platform API 0.10 and newer).
	Array bool
}

// launchFiles selects the files whose contents an image audit keeps: the launcher's metadata
// and the layers' env, env.launch and env.launch/<type> files, under layersDir.
func launchFiles(layersDir string) func(name string) bool {
	root := cleanPath(layersDir) + "/"
	return func(name string) bool {
		rest, ok := strings.CutPrefix(name, root)
		if !ok {
			return lifecycleFiles(name)
		}
		if rest == launchMetadataFile {
			return true
		}
		parts := strings.Split(rest, "/") // BUILDPACK/LAYER/env.launch/[TYPE/]FILE
		return len(parts) >= 4 && len(parts) <= 5 && (parts[2] == "env" || parts[2] == "env.launch")
	}
}

// appLaunch is what the launcher of an app image reads.
type appLaunch struct {
	processes  []launchProcess
	buildpacks []string
	problems   []string
	warnings   []string
}

// readLaunchMetadata reads the process types and buildpacks from <layers>/config/metadata.toml,
// which the launcher reads, and compares them with the label. An image without layers (made
// for a test) is judged from its label.
func readLaunchMetadata(fs builderFS, layersDir string, md buildMetadata) (appLaunch, error) {
	var app appLaunch
	var fromLabel []launchProcess
	for _, p := range md.Processes {
		command, array, err := decodeCommand(p.Command)
		if err != nil {
			return app, fmt.Errorf("unable to read label %s: process type %q: %w", BuildMetadataLabel, p.Type, err)
		}
		fromLabel = append(fromLabel, launchProcess{Type: p.Type, Command: command, Args: p.Args, Direct: p.Direct, Array: array})
	}
	for _, bp := range md.Buildpacks {
		app.buildpacks = append(app.buildpacks, bp.ID)
	}
	file := path.Join(layersDir, launchMetadataFile)
	contents, ok, err := fs.file(file)
	if err != nil {
		return app, err
	}
	if !ok {
		app.processes = fromLabel
		if len(fs.entries) > 0 {
			app.problems = append(app.problems, fmt.Sprintf("the image has no %s, which the launcher reads: no process type starts", file))
		}
		return app, nil
	}
	var metadata struct {
		Processes []struct {
			Type    string   `toml:"type"`
			Command any      `toml:"command"`
			Args    []string `toml:"args"`
			Direct  bool     `toml:"direct"`
		} `toml:"processes"`
		Buildpacks []struct {
			ID string `toml:"id"`
		} `toml:"buildpacks"`
	}
	if _, err := toml.Decode(string(contents), &metadata); err != nil {
		return app, fmt.Errorf("unable to read %s: %w", file, err)
	}
	for _, p := range metadata.Processes {
		var command []string
		var array bool
		switch c := p.Command.(type) {
		case string:
			command = []string{c}
		case []any:
			array = true
			for _, w := range c {
				s, ok := w.(string)
				if !ok {
					return app, fmt.Errorf("unable to read %s: process type %q: command %v: expected an array of strings or a string", file, p.Type, c)
				}
				command = append(command, s)
			}
		default:
			return app, fmt.Errorf("unable to read %s: process type %q: command %v: expected an array of strings or a string", file, p.Type, c)
		}
		command, array, err := checkCommand(command, array)
		if err != nil {
			return app, fmt.Errorf("unable to read %s: process type %q: %w", file, p.Type, err)
		}
		app.processes = append(app.processes, launchProcess{Type: p.Type, Command: command, Args: p.Args, Direct: p.Direct, Array: array})
	}
	app.buildpacks = nil
	for _, bp := range metadata.Buildpacks {
		app.buildpacks = append(app.buildpacks, bp.ID)
	}
	if !sameProcesses(fromLabel, app.processes) {
		app.warnings = append(app.warnings, fmt.Sprintf("label %s differs from %s, which the launcher reads and this audit judges", BuildMetadataLabel, file))
	}
	return app, nil
}

func sameProcesses(a, b []launchProcess) bool {
	norm := func(ps []launchProcess) []launchProcess {
		out := slices.Clone(ps)
		for i := range out {
			if len(out[i].Args) == 0 {
				out[i].Args = nil
			}
		}
		return out
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

// launchEnv returns the env files the launcher applies for process type t: for each buildpack
// in order, each of its layers by name, the layer's env, env.launch and env.launch/<t>, an
// unsuffixed file overriding.
func launchEnv(fs builderFS, layersDir string, buildpacks []string, t string) (envFiles, error) {
	var e envFiles
	for _, id := range buildpacks {
		bpDir := path.Join(cleanPath(layersDir), launch.EscapeID(id))
		layers, _, err := fs.dir(bpDir)
		if err != nil {
			return e, err
		}
		slices.Sort(layers)
		for _, layer := range layers {
			dir := path.Join(bpDir, layer)
			if !fs.isDir(dir) {
				continue
			}
			for _, envDir := range []string{"env", "env.launch", path.Join("env.launch", t)} {
				if err := e.readEnvDir(fs, path.Join(dir, envDir), "override"); err != nil {
					return e, err
				}
			}
		}
	}
	return e, nil
}

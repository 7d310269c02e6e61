// Package launch reads the launch.toml files that earlier buildpacks of the group wrote, each in
// its own Buildpack API format, and merges their process types the way the lifecycle's builder
// does.
package launch

import (
	"errors"
	"fmt"

	"github.com/BurntSushi/toml"
)

// Process is one process type as an earlier buildpack declared it in its launch.toml.
type Process struct {
	// Type is the process type, for example "web".
	Type string
	// Command holds one element (the executable, or a shell command line when Direct is false) for
	// Buildpack API 0.8 and older, and the elements of the command array, none when it is empty
	// or missing, for Buildpack API 0.9 and later.
	Command []string
	// Args are the process arguments.
	Args []string
	// Direct is false only for Buildpack API 0.8 (and older) processes the launcher runs through bash.
	Direct bool
	// Default marks the process as the buildpack's default process type.
	Default bool
	// WorkingDirectory is the process working-dir, empty when not set.
	WorkingDirectory string
	// ExecEnv is the exec-env list (Buildpack API 0.12 and later).
	ExecEnv []string
	// BuildpackID is the id of the buildpack that declared the process.
	BuildpackID string
	// API is the Buildpack API of that buildpack, or empty when it is unknown (no group.toml).
	API string
	// Legacy is true when the process was written in the Buildpack API 0.8 (and older) format: a
	// string command whose user arguments the launcher appends to the process arguments.
	Legacy bool
}

type launchFile struct {
	Processes []processEntry `toml:"processes"`
}

type processEntry struct {
	Type             string         `toml:"type"`
	Command          toml.Primitive `toml:"command"`
	Args             []string       `toml:"args"`
	Direct           *bool          `toml:"direct"`
	Default          bool           `toml:"default"`
	WorkingDirectory string         `toml:"working-dir"`
	ExecEnv          []string       `toml:"exec-env"`
}

// ReadLaunchTOML reads the processes of the launch.toml at path, written by buildpack id in the
// format of Buildpack API api. An empty api means the API is unknown: the format is then inferred
// from each command (a string is the 0.8 format, an array the 0.9+ format). Like the lifecycle,
// a missing direct key means false for the 0.8 format, and a direct key is an error for 0.9+. A
// 0.9+ process without a command, or with an empty one, is read with an empty Command: the
// lifecycle accepts it, and only that process type fails, when it is launched.
func ReadLaunchTOML(path, id, api string) ([]Process, error) {
	var file launchFile
	md, err := toml.DecodeFile(path, &file)
	if err != nil {
		return nil, fmt.Errorf("unable to read %s\n%w", path, err)
	}

	legacyAPI := false
	if api != "" {
		if legacyAPI, err = apiLessThan(api, "0.9"); err != nil {
			return nil, fmt.Errorf("unable to read %s of buildpack %s\n%w", path, id, err)
		}
	}

	var processes []Process
	for _, entry := range file.Processes {
		p := Process{
			Type:             entry.Type,
			Args:             entry.Args,
			Default:          entry.Default,
			WorkingDirectory: entry.WorkingDirectory,
			ExecEnv:          entry.ExecEnv,
			BuildpackID:      id,
			API:              api,
		}
		if p.Type == "" {
			return nil, fmt.Errorf("unable to read %s: a process has no type", path)
		}
		var single string
		var list []string
		switch {
		case api != "" && legacyAPI:
			if err := md.PrimitiveDecode(entry.Command, &single); err != nil {
				return nil, fmt.Errorf("unable to read %s: process %q: command must be a string for Buildpack API %s\n%w", path, p.Type, api, err)
			}
			p.Command, p.Legacy = []string{single}, true
		case api != "":
			if entry.Direct != nil {
				return nil, fmt.Errorf("unable to read %s: process %q: direct is not supported for Buildpack API %s", path, p.Type, api)
			}
			if err := md.PrimitiveDecode(entry.Command, &list); err != nil {
				return nil, fmt.Errorf("unable to read %s: process %q: command must be an array of strings for Buildpack API %s\n%w", path, p.Type, api, err)
			}
			p.Command = list
		default:
			if err := md.PrimitiveDecode(entry.Command, &single); err == nil {
				p.Command, p.Legacy = []string{single}, true
			} else if err := md.PrimitiveDecode(entry.Command, &list); err == nil {
				p.Command = list
			} else {
				return nil, fmt.Errorf("unable to read %s: process %q: command must be a string or an array of strings", path, p.Type)
			}
		}

		if p.Legacy {
			p.Direct = entry.Direct != nil && *entry.Direct
		} else {
			if entry.Direct != nil {
				return nil, fmt.Errorf("unable to read %s: process %q: direct is not supported with an array command", path, p.Type)
			}
			p.Direct = true
		}
		processes = append(processes, p)
	}

	if err := checkOneDefault(processes); err != nil {
		return nil, fmt.Errorf("unable to read %s\n%w", path, err)
	}
	return processes, nil
}

func checkOneDefault(processes []Process) error {
	seen := ""
	for _, p := range processes {
		if !p.Default {
			continue
		}
		if seen != "" {
			return errors.New("more than one default process type (" + seen + ", " + p.Type + ")")
		}
		seen = p.Type
	}
	return nil
}

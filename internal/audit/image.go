package audit

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/pid1-buildpacks/init/internal/initlayer"
	"github.com/pid1-buildpacks/init/internal/launch"
	"github.com/pid1-buildpacks/init/internal/rewrite"
)

// defaultLayersDir and defaultAppDir are where the lifecycle puts the layers and the app in an
// app image unless the platform sets CNB_LAYERS_DIR or CNB_APP_DIR.
const (
	defaultLayersDir = "/layers"
	defaultAppDir    = "/workspace"
)

// Image audits an app image: each process type must start through an init, ours (the init
// buildpack's layer) or one that rewrite.ExistingInit knows. Each type that does not is a
// problem, and so is BPL_INIT_ENABLED=false in the image's environment, with which our init
// execs the program in its own place. An error means bad input: the image is not an app image
// built with buildpacks, or its label cannot be read.
func Image(ref string, img v1.Image) (Report, error) {
	r := Report{Kind: "image", Ref: ref}
	cfg, err := imageConfig(img)
	if err != nil {
		return r, err
	}
	var md buildMetadata
	if ok, err := decodeLabel(cfg.Config.Labels, BuildMetadataLabel, &md); err != nil {
		return r, err
	} else if !ok {
		return r, fmt.Errorf("not an app image built with buildpacks: it has no label %s", BuildMetadataLabel)
	}

	env := envMap(cfg.Config.Env)
	layersDir := env["CNB_LAYERS_DIR"]
	if layersDir == "" {
		layersDir = defaultLayersDir
	}
	appDir := env["CNB_APP_DIR"]
	if appDir == "" {
		appDir = defaultAppDir
	}
	layer := path.Join(layersDir, launch.EscapeID(InitBuildpackID), initlayer.LayerName)
	ours := []string{initlayer.BinaryPath(layer), initlayer.FormerBinaryPath(layer)}

	usesOurs := false
	for _, p := range md.Processes {
		command, err := decodeCommand(p.Command)
		if err != nil {
			return r, fmt.Errorf("unable to read label %s: process type %q: %w", BuildMetadataLabel, p.Type, err)
		}
		pr := ProcessReport{Type: p.Type, Command: firstWord(command, p.Direct)}
		process := launch.Process{Type: p.Type, Command: command, Args: p.Args, Direct: p.Direct}
		if name, ok := rewrite.ExistingInit(process, appDir, ours...); ok {
			pr.Init = name
			if slices.Contains(ours, name) {
				pr.Init, usesOurs = InitBuildpackID, true
			}
		} else {
			r.Problems = append(r.Problems, fmt.Sprintf("process type %s starts %s, not an init", p.Type, pr.Command))
		}
		r.Processes = append(r.Processes, pr)
	}
	if len(md.Processes) == 0 {
		r.Problems = append(r.Problems, "the image has no process types")
	}
	if usesOurs && strings.EqualFold(strings.TrimSpace(env["BPL_INIT_ENABLED"]), "false") {
		r.Problems = append(r.Problems, "BPL_INIT_ENABLED=false in the image's environment: the init execs each program in its own place")
	}
	r.Covered = len(r.Problems) == 0
	if r.Covered {
		r.Summary = fmt.Sprintf("every process type (%d) starts through an init", len(r.Processes))
	}
	return r, nil
}

// decodeCommand reads a process command: an array since Platform API 0.10, a string before.
func decodeCommand(raw json.RawMessage) ([]string, error) {
	var command []string
	if err := json.Unmarshal(raw, &command); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, fmt.Errorf("command %s: expected an array of strings or a string", raw)
		}
		command = []string{s}
	}
	if len(command) == 0 || command[0] == "" {
		return nil, fmt.Errorf("empty command")
	}
	return command, nil
}

func firstWord(command []string, direct bool) string {
	if direct {
		return command[0]
	}
	if fields := strings.Fields(command[0]); len(fields) > 0 {
		return fields[0]
	}
	return command[0]
}

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

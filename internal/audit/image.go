package audit

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/pid1-buildpacks/init/init/launchenv"
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

// launcherPath is the launcher of an app image; /cnb/process/<type> links to it.
const launcherPath = "/cnb/lifecycle/launcher"

// Image audits an app image as the launcher runs it: the image's entrypoint must be the
// launcher (or a /cnb/process/ link to it), and each process type of /layers/config/metadata.toml
// (which the launcher reads; the label is compared with it) must start through an init, ours
// (the init buildpack's layer) or one that rewrite.ExistingInit knows. Ours must be given "--"
// and a program, in the command where the user's arguments cannot replace them, and the
// BPL_INIT_* values it sees (the image's environment, the layers' env and env.launch files,
// `env NAME=VALUE` before it) must neither make it refuse to start nor turn it off. Each type
// that fails one is a problem. An error means bad input: the image is not an app image built
// with buildpacks, or its label or files cannot be read.
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
	imageEnv := envMap(cfg.Config.Env)
	layersDir := imageEnv["CNB_LAYERS_DIR"]
	if layersDir == "" {
		layersDir = defaultLayersDir
	}
	appDir := imageEnv["CNB_APP_DIR"]
	if appDir == "" {
		appDir = defaultAppDir
	}
	fs, err := readBuilderFS(img, launchFiles(layersDir))
	if err != nil {
		return r, err
	}
	app, err := readLaunchMetadata(fs, layersDir, md)
	if err != nil {
		return r, err
	}
	r.Warnings = app.warnings
	r.Problems = append(r.Problems, app.problems...)
	var exported lifecycleMetadata
	if _, err := decodeLabel(cfg.Config.Labels, LifecycleMetadataLabel, &exported); err != nil {
		return r, err
	}
	if problem := auditEntrypoint(cfg.Config, fs, app.processes); problem != "" {
		r.Problems = append(r.Problems, problem)
	} else if len(cfg.RootFS.DiffIDs) > 0 {
		if problem := auditExported(fs, cfg, launcherPath, "the launcher", exported.Launcher.SHA, LifecycleMetadataLabel); problem != "" {
			r.Problems = append(r.Problems, problem)
		}
	}

	layer := path.Join(layersDir, launch.EscapeID(InitBuildpackID), initlayer.LayerName)
	ours := []string{initlayer.BinaryPath(layer), initlayer.FormerBinaryPath(layer)}
	checked := map[string]bool{}
	for _, p := range app.processes {
		pr := ProcessReport{Type: p.Type, Command: firstWord(p.Command, p.Direct)}
		process := launch.Process{Type: p.Type, Command: p.Command, Args: p.Args, Direct: p.Direct}
		name, ok := rewrite.ExistingInit(process, appDir, ours...)
		switch {
		case !ok:
			r.Problems = append(r.Problems, fmt.Sprintf("process type %s starts %s, not an init", p.Type, pr.Command))
		case !slices.Contains(ours, name):
			pr.Init = name
		default:
			pr.Init = InitBuildpackID
			if !checked[name] && len(cfg.RootFS.DiffIDs) > 0 {
				checked[name] = true
				if problem := auditExported(fs, cfg, name, "the init", exported.layerOf(InitBuildpackID, initlayer.LayerName), LifecycleMetadataLabel); problem != "" {
					r.Problems = append(r.Problems, problem)
				}
			}
			env, err := launchEnv(fs, layersDir, app.buildpacks, p.Type)
			if err != nil {
				return r, err
			}
			r.Problems = append(r.Problems, auditOurs(p, ours, imageEnv, env)...)
		}
		r.Processes = append(r.Processes, pr)
	}
	if len(app.processes) == 0 {
		r.Problems = append(r.Problems, "the image has no process types")
	}
	r.Covered = len(r.Problems) == 0
	if r.Covered {
		r.Summary = fmt.Sprintf("every process type (%d) starts through an init", len(r.Processes))
	}
	return r, nil
}

// auditEntrypoint returns why the image's entrypoint is not the launcher, if it is not, or why
// what docker run starts by default is not a process type: the launcher started as itself
// (not as /cnb/process/<type>) has no default process type and runs the rest of the
// entrypoint and the image's command as a command of its own.
func auditEntrypoint(config v1.Config, fs builderFS, processes []launchProcess) string {
	entrypoint := config.Entrypoint
	if len(entrypoint) == 0 {
		return "the image has no entrypoint: docker run starts its command, not the launcher, and no process type runs as the image says"
	}
	ep := entrypoint[0]
	resolved, err := fs.resolve(ep)
	switch {
	case err != nil:
		return fmt.Sprintf("the image's entrypoint %s: %v", ep, err)
	case ep == launcherPath && (len(fs.entries) == 0 || resolved == cleanPath(launcherPath)),
		strings.HasPrefix(ep, "/cnb/process/") && resolved == cleanPath(launcherPath):
		command := append(append([]string{}, entrypoint[1:]...), config.Cmd...)
		isType := slices.ContainsFunc(processes, func(p launchProcess) bool { return p.Type == path.Base(ep) })
		if len(command) > 0 && !isType {
			return fmt.Sprintf("docker run starts %q: the launcher, started as %s, has no default process type and runs it without the init", command, ep)
		}
		return ""
	}
	return fmt.Sprintf("the image's entrypoint is %s, not the launcher (%s or a /cnb/process/ link to it): no process type starts as the image says", ep, launcherPath)
}

// auditOurs returns the problems of a process type that starts our init: its arguments, and the
// BPL_INIT_* values it sees.
func auditOurs(p launchProcess, ours []string, imageEnv map[string]string, env envFiles) []string {
	if !p.Direct {
		return []string{fmt.Sprintf("process type %s starts the init from a shell script: the audit cannot check that it runs a program", p.Type)}
	}
	argv := append(append([]string{}, p.Command...), p.Args...)
	// From Platform API 0.10 the user's arguments replace args: "--" and the program must be
	// in the command. Before, they are appended to command and args.
	fixed := argv
	if p.Array {
		fixed = p.Command
	}
	start, changes, through := initArgv(fixed, ours)
	var problems []string
	switch {
	case start == nil:
		problems = append(problems, fmt.Sprintf("process type %s starts the init through %s: the audit cannot check that it runs a program", p.Type, through))
	case len(start) >= 3 && start[1] == rewrite.Separator && start[2] != "":
	default:
		if all, _, _ := initArgv(argv, ours); len(all) >= 3 && all[1] == rewrite.Separator && all[2] != "" {
			problems = append(problems, fmt.Sprintf("process type %s gives the init %q and its program in args, which the user's arguments replace (docker run IMAGE ARGS...)", p.Type, rewrite.Separator))
		} else {
			problems = append(problems, fmt.Sprintf("process type %s starts the init as %q: without %q and a program after it, the init runs no app", p.Type, start, rewrite.Separator))
		}
	}
	return append(problems, auditLaunchEnv(p.Type, imageEnv, env, changes)...)
}

// initArgv returns the argv from our init on, looking through env (and the environment changes
// env makes on the way); start is nil when argv reaches the init otherwise (a shell), which
// through names.
func initArgv(argv []string, ours []string) (start []string, changes []rewrite.EnvChange, through string) {
	for depth := 0; len(argv) > 0 && depth <= 4; depth++ {
		if slices.Contains(ours, argv[0]) {
			return argv, changes, ""
		}
		if path.Base(argv[0]) != "env" {
			return nil, nil, argv[0]
		}
		var more []rewrite.EnvChange
		argv, more = rewrite.EnvCommand(argv[1:])
		changes = append(changes, more...)
	}
	return nil, nil, "env"
}

// auditLaunchEnv returns the problems of the BPL_INIT_* values our init sees in process type t:
// the image's environment, then the layers' env files, then env's changes before the init.
func auditLaunchEnv(t string, imageEnv map[string]string, env envFiles, changes []rewrite.EnvChange) []string {
	values := map[string]string{}
	from := map[string]string{}
	names := map[string]bool{}
	for name := range imageEnv {
		names[name] = strings.HasPrefix(name, launchenv.Prefix)
	}
	for _, f := range env.files {
		names[f.Variable] = strings.HasPrefix(f.Variable, launchenv.Prefix)
	}
	for name, ours := range names {
		if !ours {
			continue
		}
		var start *string
		if v, ok := imageEnv[name]; ok {
			start, from[name] = &v, "the image's environment"
		}
		value, files, set := env.resolve(name, start)
		if len(files) > 0 {
			from[name] = strings.Join(files, ", ")
		}
		if set {
			values[name] = value
		}
	}
	for _, c := range changes {
		switch {
		case c.Clear:
			values, from = map[string]string{}, map[string]string{}
		case c.Unset:
			delete(values, c.Name)
		default:
			values[c.Name], from[c.Name] = c.Value, "env "+c.Name+"=... before the init"
		}
	}
	if env.Broken != "" {
		return []string{fmt.Sprintf("process type %s: %s cannot be read (a dangling link): the launcher fails", t, env.Broken)}
	}
	lookup := func(name string) (string, bool) { v, ok := values[name]; return v, ok }
	enabled, err := launchenv.Check(lookup)
	switch {
	case err != nil:
		var sources []string
		for name := range values {
			if strings.HasPrefix(name, launchenv.Prefix) && from[name] != "" {
				sources = append(sources, name+" from "+from[name])
			}
		}
		slices.Sort(sources)
		return []string{fmt.Sprintf("process type %s: the init refuses to start: %v (%s)", t, err, strings.Join(sources, "; "))}
	case !enabled:
		return []string{fmt.Sprintf("process type %s: BPL_INIT_ENABLED=false (%s): the init execs the program in its own place", t, from["BPL_INIT_ENABLED"])}
	}
	return nil
}

// decodeCommand reads a process command: an array since Platform API 0.10, a string before.
func decodeCommand(raw json.RawMessage) (command []string, array bool, err error) {
	if err := json.Unmarshal(raw, &command); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false, fmt.Errorf("command %s: expected an array of strings or a string", raw)
		}
		return checkCommand([]string{s}, false)
	}
	return checkCommand(command, true)
}

func checkCommand(command []string, array bool) ([]string, bool, error) {
	if len(command) == 0 || command[0] == "" {
		return nil, false, fmt.Errorf("empty command")
	}
	return command, array, nil
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

package buildpack

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/buildpacks/libcnb/v2"
	"github.com/heroku/color"
	"github.com/paketo-buildpacks/libpak/v2/log"

	"github.com/pid1-buildpacks/init/internal/config"
	"github.com/pid1-buildpacks/init/internal/initlayer"
	"github.com/pid1-buildpacks/init/internal/launch"
	"github.com/pid1-buildpacks/init/internal/rewrite"
)

// Build contributes the init launch layer and rewrites the process types of the earlier
// buildpacks of the group so that each one starts through the init. With BP_INIT_ENABLED=false it
// contributes nothing and writes no process type, so that every type stays as the earlier
// buildpacks defined it.
type Build struct {
	Logger log.Logger
	// BuildConfigDir is the lifecycle's build-config directory; empty means
	// config.DefaultBuildConfigDir.
	BuildConfigDir string
}

// Build implements libcnb.BuildFunc.
func (b Build) Build(context libcnb.BuildContext) (libcnb.BuildResult, error) {
	result := libcnb.NewBuildResult()
	info := context.Buildpack.Info
	b.Logger.Title(info.Name, info.Version, info.Homepage)

	cr, err := configurationResolver(context.Buildpack)
	if err != nil {
		return result, err
	}
	cfg, err := config.Resolve(cr)
	if err == nil && !cfg.Enabled {
		b.Logger.Headerf("%s is false: no init contributed, every process type left as is", config.Enabled)
		return result, nil
	}
	cr.LogConfiguration(b.Logger)
	if err != nil {
		return result, err
	}

	source, arch, err := initSource(context.Buildpack.Path, context.TargetInfo)
	if err != nil {
		return result, err
	}
	contributor, err := initlayer.NewContributor(source, info, arch, b.Logger)
	if err != nil {
		return result, err
	}
	layer, err := context.Layers.Layer(contributor.Name())
	if err != nil {
		return result, fmt.Errorf("unable to create layer %s\n%w", contributor.Name(), err)
	}
	if err := contributor.Contribute(&layer); err != nil {
		return result, fmt.Errorf("unable to contribute layer %s\n%w", contributor.Name(), err)
	}
	result.Layers = append(result.Layers, layer)

	processes, err := b.wrapProcesses(context.Layers.Path, info.ID, context.ApplicationPath, layer.Path, cfg)
	if err != nil {
		return result, err
	}
	result.Processes = processes
	return result, nil
}

// wrapProcesses returns the wrapped process types to write in this buildpack's launch.toml; the
// init is in the layer at initLayer.
func (b Build) wrapProcesses(layersDir, ownID, appDir, initLayer string, cfg config.Config) ([]libcnb.Process, error) {
	b.Logger.Header("Wrapping process types")

	collection, err := launch.Collect(layersDir, ownID)
	if err != nil {
		return nil, err
	}
	if err := b.requireLast(ownID, collection.Later); err != nil {
		return nil, err
	}
	for _, w := range collection.Warnings {
		b.warn(w)
	}
	merged := launch.Merge(collection.Sets)

	if len(merged.Processes) == 0 {
		b.Logger.Body("No process types defined by earlier buildpacks: nothing to wrap")
		return nil, nil
	}

	initPath := initlayer.BinaryPath(initLayer)
	image := rewrite.Image{LayersDir: filepath.Dir(filepath.Clean(layersDir)), AppDir: appDir, Group: collection.Group}
	defined := map[string]bool{}
	var wrapped []libcnb.Process
	for _, p := range merged.Processes {
		defined[p.Type] = true
		before := formatArgv(append(append([]string{}, p.Command...), p.Args...))
		switch {
		case !cfg.Selects(p.Type):
			b.Logger.Bodyf("%s: not selected by %s, left as is", p.Type, config.ProcessTypes)
			continue
		case len(p.ExecEnv) > 0:
			b.warn(fmt.Sprintf("process type %q has exec-env %v, which Buildpack API 0.10 cannot declare: left as is", p.Type, p.ExecEnv))
			continue
		case len(p.Command) == 0:
			b.warn(fmt.Sprintf("process type %q of %s has an empty command: left as is (launching that type fails, with or without the init; below Platform API 0.10 the lifecycle's builder fails on it)", p.Type, p.BuildpackID))
			continue
		}
		if name, ok := rewrite.ExistingInit(p, appDir, initPath, initlayer.FormerBinaryPath(initLayer)); ok {
			b.Logger.Bodyf("%s: already starts with %s, not wrapped twice: %s", p.Type, name, before)
			continue
		}

		w := rewrite.Wrap(p, initPath, image, p.Type == merged.DefaultType)
		after := formatArgv(append(append([]string{}, w.Command...), w.Arguments...))
		b.Logger.Bodyf("%s: %s", p.Type, before)
		b.Logger.Bodyf("%s  becomes %s", strings.Repeat(" ", len(p.Type)), after)
		if !p.Direct && !collection.Ordered {
			b.warn(fmt.Sprintf("process type %q is a Buildpack API %s shell process: without group.toml the order of the buildpacks is unknown, so its profile.d scripts are sourced in the order of their directory names", p.Type, apiOrLegacy(p.API)))
		}
		wrapped = append(wrapped, w)
	}

	for _, t := range cfg.Types {
		if !defined[t] {
			b.warn(fmt.Sprintf("%s names process type %q, which no earlier buildpack defines", config.ProcessTypes, t))
		}
	}
	return wrapped, nil
}

func (b Build) warn(message string) {
	b.Logger.Headerf("%s", color.YellowString("Warning: %s", message))
}

func apiOrLegacy(api string) string {
	if api == "" {
		return "0.8 (or older)"
	}
	return api
}

// initSource returns the init binary for the build's target, and its architecture: bin/init of
// the buildpack, built for the architecture the build binary runs on, or linux/<arch>/bin/init
// when the target architecture differs.
func initSource(buildpackPath string, target libcnb.TargetInfo) (string, string, error) {
	if target.OS != "" && target.OS != "linux" {
		return "", "", fmt.Errorf("unable to provide an init for target os %q: only linux is supported", target.OS)
	}
	arch := target.Arch
	if arch == "" {
		arch = runtime.GOARCH
	}

	path := filepath.Join(buildpackPath, "bin", "init")
	if arch != runtime.GOARCH {
		path = filepath.Join(buildpackPath, "linux", arch, "bin", "init")
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return "", "", fmt.Errorf("unable to find the init for linux/%s at %s: build the buildpack with scripts/build.sh", arch, path)
	} else if err != nil {
		return "", "", fmt.Errorf("unable to read %s\n%w", path, err)
	}
	return path, arch, nil
}

// formatArgv renders argv for the log, quoting elements that are empty or contain spaces or quotes
// and abbreviating the wrapper's shell script.
func formatArgv(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		switch {
		case rewrite.IsShellScript(a):
			parts[i] = "<the launcher's bash script: profile.d, .profile, cd>"
		case a == "" || strings.ContainsAny(a, " \t\n\"'\\"):
			parts[i] = strconv.Quote(a)
		default:
			parts[i] = a
		}
	}
	return strings.Join(parts, " ")
}

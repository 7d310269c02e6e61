package buildpack_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/buildpacks/libcnb/v2"
	"github.com/paketo-buildpacks/libpak/v2/log"
	"github.com/paketo-buildpacks/libpak/v2/utils"

	"github.com/pid1-buildpacks/init/internal/buildpack"
	"github.com/pid1-buildpacks/init/internal/launch"
)

// exitRecorder records how libcnb ended detect or build.
type exitRecorder struct {
	err    error
	failed bool
	passed bool
}

func (e *exitRecorder) Error(err error) { e.err = err }
func (e *exitRecorder) Fail()           { e.failed = true }
func (e *exitRecorder) Pass()           { e.passed = true }

// workspace is a buildpack directory, a platform directory and a layers directory laid out the
// way the lifecycle lays them out, with the real buildpack.toml and a fake init.
type workspace struct {
	t          *testing.T
	root       string
	layersRoot string
	layersDir  string
	buildpack  string
	initPath   string
	// buildConfig is the build-config directory the build reads instead of /cnb/build-config.
	buildConfig string
}

const ownID = "pid1-buildpacks/init"

func newWorkspace(t *testing.T) *workspace {
	w := &workspace{t: t, root: t.TempDir()}
	w.layersRoot = filepath.Join(w.root, "layers")
	w.layersDir = filepath.Join(w.layersRoot, "pid1-buildpacks_init")
	w.buildpack = filepath.Join(w.root, "buildpack")
	w.initPath = filepath.Join(w.layersDir, "init", "sbin", "init")
	w.buildConfig = filepath.Join(w.root, "build-config")

	descriptor, err := os.ReadFile(filepath.Join("..", "..", "buildpack.toml"))
	must(t, err)
	w.write(filepath.Join(w.buildpack, "buildpack.toml"), string(descriptor))
	w.write(filepath.Join(w.buildpack, "bin", "init"), "fake init for "+runtime.GOARCH)
	must(t, os.MkdirAll(w.layersDir, 0755))
	must(t, os.MkdirAll(filepath.Join(w.root, "platform"), 0755))
	w.write(filepath.Join(w.root, "plan.toml"), "")

	t.Setenv("CNB_BUILDPACK_DIR", w.buildpack)
	t.Setenv("CNB_LAYERS_DIR", w.layersDir)
	t.Setenv("CNB_PLATFORM_DIR", filepath.Join(w.root, "platform"))
	t.Setenv("CNB_BP_PLAN_PATH", filepath.Join(w.root, "plan.toml"))
	t.Setenv("CNB_BUILD_PLAN_PATH", filepath.Join(w.root, "build-plan.toml"))
	t.Setenv("CNB_TARGET_OS", "linux")
	t.Setenv("CNB_TARGET_ARCH", runtime.GOARCH)
	for _, name := range []string{"BP_INIT_ENABLED", "BP_INIT_PROCESS_TYPES"} {
		t.Setenv(name, "")
		must(t, os.Unsetenv(name))
	}
	return w
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (w *workspace) write(path, content string) {
	must(w.t, os.MkdirAll(filepath.Dir(path), 0755))
	must(w.t, os.WriteFile(path, []byte(content), 0644))
}

// group writes group.toml with the given (id, api) pairs.
func (w *workspace) group(entries ...[2]string) {
	content := ""
	for _, e := range entries {
		content += "[[group]]\n  id = \"" + e[0] + "\"\n  version = \"1.0.0\"\n  api = \"" + e[1] + "\"\n\n"
	}
	w.write(filepath.Join(w.layersRoot, "group.toml"), content)
}

// launch writes the launch.toml of buildpack id and returns its path.
func (w *workspace) launch(id, content string) string {
	path := filepath.Join(w.layersRoot, launch.EscapeID(id), "launch.toml")
	w.write(path, content)
	return path
}

// build runs the build executable's logic through libcnb, as the lifecycle would, and returns
// its log and how it ended.
func (w *workspace) build() (string, *exitRecorder) {
	var out bytes.Buffer
	logger := log.NewPaketoLogger(&out)
	exit := &exitRecorder{}
	libcnb.Build(buildpack.Build{Logger: logger, BuildConfigDir: w.buildConfig}.Build, libcnb.NewConfig(
		libcnb.WithExitHandler(exit),
		libcnb.WithTOMLWriter(utils.NewTOMLWriter(utils.WithTOMLWriterLogger(logger))),
		libcnb.WithEnvironmentWriter(utils.NewEnvironmentWriter(utils.WithEnvironmentWriterLogger(logger))),
	))
	return out.String(), exit
}

// appDir is the application directory the build sees: libcnb's, the working directory.
func (w *workspace) appDir() string {
	dir, err := os.Getwd()
	must(w.t, err)
	return dir
}

// detect runs the detect executable's logic through libcnb.
func (w *workspace) detect() (string, *exitRecorder) {
	var out bytes.Buffer
	logger := log.NewPaketoLogger(&out)
	exit := &exitRecorder{}
	libcnb.Detect(buildpack.Detect{Logger: logger}.Detect, libcnb.NewConfig(
		libcnb.WithExitHandler(exit),
		libcnb.WithArguments([]string{"detect", filepath.Join(w.root, "platform"), filepath.Join(w.root, "build-plan.toml")}),
		libcnb.WithTOMLWriter(utils.NewTOMLWriter(utils.WithTOMLWriterLogger(logger))),
	))
	return out.String(), exit
}

// writtenProcess is a process of the launch.toml the build wrote, decoded as the lifecycle
// decodes Buildpack API 0.10.
type writtenProcess struct {
	Type             string   `toml:"type"`
	Command          []string `toml:"command"`
	Args             []string `toml:"args"`
	WorkingDirectory string   `toml:"working-dir"`
	Default          bool     `toml:"default"`
}

// processes returns the processes of the launch.toml the build wrote, and whether it exists.
func (w *workspace) processes() ([]writtenProcess, bool) {
	path := filepath.Join(w.layersDir, "launch.toml")
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil, false
	}
	var file struct {
		Processes []writtenProcess `toml:"processes"`
	}
	md, err := toml.DecodeFile(path, &file)
	must(w.t, err)
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		w.t.Fatalf("%s has keys Buildpack API 0.10 does not define: %v", path, undecoded)
	}
	for i := range file.Processes {
		if len(file.Processes[i].Args) == 0 {
			file.Processes[i].Args = nil
		}
	}
	return file.Processes, true
}

package integration_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
	"github.com/sclevine/spec/report"
)

const (
	initBuildpackID = "pid1-buildpacks/init"
	// initPath is where the init is at launch: <layers>/<escaped id>/<layer>/sbin/init, out of
	// the bin/ directories the launcher puts on PATH.
	initPath = "/layers/pid1-buildpacks_init/init/sbin/init"

	builderWith    = "pid1-buildpacks/builder:with"
	builderWithout = "pid1-buildpacks/builder:without"
)

// settings is what every test shares: the tools, the sample app and the two images of it that
// the suite builds once, with and without the init buildpack.
var settings struct {
	Root, Pack, App string
	// With is built with builderWith (the init buildpack from build/init-buildpack.cnb, last
	// in the group); Without with builderWithout (the sample app buildpacks only).
	With, Without string
}

// TestIntegration builds the sample app with real pack, the real lifecycle and a real Docker
// daemon, and runs the images. It needs scripts/setup.sh, scripts/images.sh,
// scripts/package.sh and scripts/builders.sh to have run (scripts/test.sh runs them all); a
// missing prerequisite fails the suite and says which, it never skips.
func TestIntegration(t *testing.T) {
	Expect := NewWithT(t).Expect

	settings.Root = repoRoot()
	settings.Pack = os.Getenv("PACK")
	if settings.Pack == "" {
		settings.Pack = filepath.Join(settings.Root, ".tools", "bin", "pack")
	}
	settings.App = filepath.Join(settings.Root, "integration", ".work", "app")

	requirePrerequisites(t)
	removeLeftovers(t)
	t.Cleanup(func() { removeLeftovers(t); removeReleaseImages() })

	settings.With = "pid1-it/sample:with"
	settings.Without = "pid1-it/sample:without"
	r := mustPackBuild(t, settings.Without, builderWithout)
	t.Logf("build time without the buildpack: %v", r.Duration.Round(10*time.Millisecond))
	r = mustPackBuild(t, settings.With, builderWith)
	t.Logf("build time with the buildpack: %v", r.Duration.Round(10*time.Millisecond))
	Expect(r.Output).To(ContainSubstring(initBuildpackID))

	suite := spec.New("Integration", spec.Report(report.Terminal{}))
	suite("Processes", testProcesses)
	suite("PID1", testPID1)
	suite("Zombies", testZombies)
	suite("Stop", testStop)
	suite("ExitCodes", testExitCodes)
	suite("Rebuild", testRebuild)
	suite("Configuration", testConfiguration)
	suite("WaysOfUse", testWaysOfUse)
	suite("README", testReadme)
	suite("Release", testRelease)
	suite("RegistryScript", testRegistryScript)
	suite("SystemBuilder", testSystemBuilder)
	suite("LifecycleMatrix", testLifecycleMatrix)
	suite("Platforms", testPlatforms)
	suite("EverywhereBuilder", testEverywhereBuilder)
	suite("Audit", testAudit)
	suite("BuilderOwnersReadme", testBuilderOwnersReadme)
	suite("PlatformsDoc", testPlatformsDoc)
	suite("Path", testPath)
	suite("RunModes", testRunModes)
	suite("Leftovers", testLeftovers)
	suite("Podman", testPodman)
	suite("Launcher", testLauncher)
	suite("Pods", testPods)
	suite.Run(t)
}

func requirePrerequisites(t *testing.T) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Fatalf("integration prerequisite missing: "+format+"\n(scripts/test.sh sets everything up; see scripts/setup.sh)", args...)
	}
	if _, err := exec.LookPath("docker"); err != nil {
		fail("the docker client is not on PATH")
	}
	if out, err := exec.Command("docker", "version", "--format", "{{.Server.APIVersion}}").CombinedOutput(); err != nil {
		fail("no Docker daemon answers (`docker version`: %v: %s)", err, strings.TrimSpace(string(out)))
	}
	if os.Getenv("DOCKER_API_VERSION") == "" {
		fail("DOCKER_API_VERSION is not set; pack speaks a newer API than Debian's engine: source .tools/env")
	}
	if err := registryAnswers(); err != nil {
		fail("no registry answers on http://%s/v2/ (%v): scripts/registry.sh start", registryAddr(), err)
	}
	if _, err := os.Stat(settings.Pack); err != nil {
		fail("pack: %v", err)
	}
	if _, err := os.Stat(filepath.Join(settings.App, "bin", "sample-app")); err != nil {
		fail("the sample app: %v (scripts/builders.sh app)", err)
	}
	for _, image := range []string{builderWith, builderWithout, builderSystem, builderSystemLocked, builderSystem020, builderEverywhere,
		matrixBuilders[0].Builder, matrixBuilders[1].Builder, "pid1-buildpacks/run:busybox"} {
		if err := exec.Command("docker", "image", "inspect", image).Run(); err != nil {
			fail("image %s is not in the daemon (scripts/images.sh, scripts/builders.sh)", image)
		}
	}
	for _, path := range []string{"build/init-buildpack.cnb", "bin/init", "bin/build", "bin/detect", "bin/audit"} {
		if _, err := os.Stat(filepath.Join(settings.Root, path)); err != nil {
			fail("%s: %v (scripts/package.sh builds it)", path, err)
		}
	}
}

// removeLeftovers removes the images this suite builds (all named pid1-it/...) and their pack
// cache volumes: leftovers of an interrupted run would otherwise be reused as previous images.
func removeLeftovers(t *testing.T) {
	t.Helper()
	if out, err := exec.Command("docker", "images", "--filter", "reference=pid1-it/*", "--format", "{{.Repository}}:{{.Tag}}").Output(); err == nil {
		for _, image := range strings.Fields(string(out)) {
			_ = exec.Command("docker", "rmi", "-f", image).Run()
		}
	}
	if out, err := exec.Command("docker", "volume", "ls", "-q", "--filter", "name=pack-cache-pid1-it_").Output(); err == nil {
		for _, volume := range strings.Fields(string(out)) {
			_ = exec.Command("docker", "volume", "rm", volume).Run()
		}
	}
}

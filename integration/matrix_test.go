package integration_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

// matrixBuilders are the builders with the init last in every group, one per lifecycle
// (scripts/builders.sh makes them), with the Platform API pack v0.40.0 uses with each.
var matrixBuilders = []struct {
	Lifecycle, PlatformAPI, Builder string
}{
	{"0.18.5", "0.12", "pid1-buildpacks/builder:with-lifecycle-0.18.5"},
	{"0.20.12", "0.14", "pid1-buildpacks/builder:with-lifecycle-0.20.12"},
	{"0.21.11", "0.15", builderWith},
}

// testLifecycleMatrix runs the scenarios that need no system buildpack on every lifecycle
// builders ship today (issue 7, item 4): types wrapped as before with args, working-dir and
// default kept, PID 1 is the init, exit codes and signals, docker stop, BP_INIT_ENABLED=false,
// a bad value, and --buildpack from=builder.
func testLifecycleMatrix(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	for _, m := range matrixBuilders {
		m := m
		context("lifecycle "+m.Lifecycle, func() {
			it("wraps every process type, keeping args, working-dir and default; the app runs under the init", func() {
				image := "pid1-it/matrix-" + m.Lifecycle + ":latest"
				r := mustPackBuild(t, image, m.Builder, "-v")
				Expect(r.Output).To(MatchRegexp(`CNB_PLATFORM_API=`+regexp.QuoteMeta(m.PlatformAPI)+`\b`),
					"pack uses Platform API %s with lifecycle %s", m.PlatformAPI, m.Lifecycle)
				before, after := processesByType(t, settings.Without), processesByType(t, image)
				Expect(after).To(HaveLen(len(before)))
				for typ, p := range before {
					Expect(after[typ].Command[:3]).To(Equal([]string{initPath, "--", firstOf(p)}), typ)
					Expect(after[typ].WorkingDir).To(Equal(p.WorkingDir), typ)
					Expect(after[typ].Default).To(Equal(p.Default), typ)
				}
				Expect(pid1Cmdline(t, image)).To(HavePrefix(initPath + " -- /workspace/bin/sample-app serve --name web"))

				Expect(dockerRun(t, "--entrypoint", "exit", image, "42").ExitCode).To(Equal(42))
				Expect(dockerRun(t, "--entrypoint", "kill", image, "15").ExitCode).To(Equal(128 + 15))
				id := startContainer(t, "--entrypoint", "shell-wrapped", image)
				waitForLog(t, id, serving, 30*time.Second)
				stop := run(t, time.Minute, nil, "docker", "stop", "-t", "10", id)
				Expect(stop.ExitCode).To(Equal(0), stop.Output)
				Expect(stop.Duration.Seconds()).To(BeNumerically("<", 5), "docker stop of the app behind sh -c")
				Expect(docker(t, "inspect", "--format", "{{.State.ExitCode}}", id)).To(Equal("143"))
			})

			it("leaves every type unwrapped with BP_INIT_ENABLED=false and fails on a bad value", func() {
				image := "pid1-it/matrix-disabled-" + m.Lifecycle + ":latest"
				r := mustPackBuild(t, image, m.Builder, "--env", "BP_INIT_ENABLED=false")
				Expect(r.Output).To(ContainSubstring(disabledLine))
				Expect(processesByType(t, image)).To(Equal(processesByType(t, settings.Without)))

				r = packBuild(t, "pid1-it/matrix-bad-"+m.Lifecycle+":latest", m.Builder, "--env", "BP_INIT_PROCESS_TYPES=web;worker")
				Expect(r.ExitCode).NotTo(Equal(0))
				Expect(r.Output).To(ContainSubstring(`invalid BP_INIT_PROCESS_TYPES "web;worker"`))
			})

			it("wraps when appended with --buildpack from=builder --buildpack <.cnb>", func() {
				image := "pid1-it/matrix-appended-" + m.Lifecycle + ":latest"
				r := mustPackBuild(t, image, m.Builder, "--trust-extra-buildpacks", "--buildpack", "from=builder",
					"--buildpack", filepath.Join(settings.Root, "build", "init-buildpack.cnb"))
				expectEveryTypeWrapped(t, image, r.Output)
			})
		})
	}

	// A lifecycle older than 0.17 supports Buildpack API 0.9 at most. No such lifecycle is built
	// here: pack refuses the builder before any lifecycle runs, by comparing the lifecycle's
	// descriptor (lifecycle.toml) with each buildpack's API, so the 0.18.5 binaries with the
	// descriptor of lifecycle 0.16.5 show what users of such a lifecycle see.
	it("is refused by pack builder create on a lifecycle without Buildpack API 0.10", func() {
		stage := t.TempDir()
		Expect(os.MkdirAll(filepath.Join(stage, "lifecycle"), 0o755)).To(Succeed())
		bin := filepath.Join(settings.Root, ".tools", "lifecycles", "v0.18.5")
		for _, name := range []string{"lifecycle", "launcher"} {
			data, err := os.ReadFile(filepath.Join(bin, name))
			Expect(err).NotTo(HaveOccurred())
			Expect(os.WriteFile(filepath.Join(stage, "lifecycle", name), data, 0o755)).To(Succeed())
		}
		for _, phase := range []string{"detector", "restorer", "analyzer", "builder", "exporter", "creator", "rebaser"} {
			Expect(os.Symlink("lifecycle", filepath.Join(stage, "lifecycle", phase))).To(Succeed())
		}
		Expect(os.WriteFile(filepath.Join(stage, "lifecycle.toml"), []byte(`[apis]
[apis.buildpack]
  deprecated = []
  supported = ["0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9"]
[apis.platform]
  deprecated = []
  supported = ["0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "0.10", "0.11"]
[api]
  platform = "0.3"
  buildpack = "0.2"
[lifecycle]
  version = "0.16.5"
`), 0o644)).To(Succeed())
		tgz := filepath.Join(t.TempDir(), "lifecycle.tgz")
		out, err := exec.Command("tar", "-C", stage, "-czf", tgz, "lifecycle.toml", "lifecycle").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))

		// The init buildpack alone, so that pack names it.
		toml := filepath.Join(t.TempDir(), "builder.toml")
		Expect(os.WriteFile(toml, []byte(`[[buildpacks]]
  uri = "`+filepath.Join(settings.Root, "build", "init-buildpack.cnb")+`"

[[order]]
  [[order.group]]
    id = "pid1-buildpacks/init"

[build]
  image = "pid1-buildpacks/build:busybox"

[[run.images]]
  image = "pid1-buildpacks/run:busybox"

[lifecycle]
  uri = "`+tgz+`"
`), 0o644)).To(Succeed())
		r := run(t, 2*time.Minute, nil, settings.Pack, "builder", "create", "pid1-it/old-lifecycle-builder:latest",
			"--config", toml, "--pull-policy", "never")
		t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", "pid1-it/old-lifecycle-builder:latest").Run() })
		Expect(r.ExitCode).NotTo(Equal(0), r.Output)
		t.Logf("pack builder create with lifecycle 0.16.5's descriptor: exit %d: %s", r.ExitCode, strings.TrimSpace(r.Output))
		Expect(r.Output).To(ContainSubstring("ERROR: validating buildpacks: buildpack 'pid1-buildpacks/init@0.1.0' (Buildpack API 0.10) is incompatible with lifecycle '0.16.5' (Buildpack API(s) 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)"))
	})
}

package integration_test

import (
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

// testProcesses checks that every process type is wrapped and still takes its arguments the
// way it did before wrapping (issue 4, items 1 and 6).
func testProcesses(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	it("wraps every process type and keeps args, working-dir and default (pack inspect)", func() {
		before := processesByType(t, settings.Without)
		after := processesByType(t, settings.With)

		var types []string
		for typ := range before {
			types = append(types, typ)
		}
		sort.Strings(types)
		Expect(types).To(ConsistOf("web", "echo", "worker", "shell-wrapped", "exit", "kill", "legacy-direct", "legacy-shell"))
		Expect(after).To(HaveLen(len(before)), "the same process types with the buildpack")

		for _, typ := range types {
			b, a := before[typ], after[typ]
			t.Logf("%-14s before: command=%q args=%q wd=%q default=%v", typ, b.Command, b.Args, b.WorkingDir, b.Default)
			t.Logf("%-14s after:  command=%q args=%q wd=%q default=%v", typ, a.Command, a.Args, a.WorkingDir, a.Default)
			Expect(len(a.Command)).To(BeNumerically(">=", 3), typ)
			Expect(a.Command[:2]).To(Equal([]string{initPath, "--"}), "%s starts through the init", typ)
			Expect(a.WorkingDir).To(Equal(b.WorkingDir), "%s working-dir", typ)
			Expect(a.Default).To(Equal(b.Default), "%s default", typ)
			Expect(a.BuildpackID).To(Equal(initBuildpackID), typ)

			switch {
			case b.BuildpackID == "samples/legacy" && b.Direct:
				// API 0.8 direct: the user's arguments were appended after args, so the args
				// must now sit in the command for API 0.10 semantics to append them too.
				Expect(append(a.Command[2:], a.Args...)).To(Equal(append(append([]string{}, b.Command...), b.Args...)), typ)
			case b.BuildpackID == "samples/legacy":
				// API 0.8 shell: runs through bash -c with the same script.
				Expect(a.Command[2]).To(Or(Equal("bash"), Equal("/bin/bash")), typ)
				Expect(strings.Join(a.Command, " ")).To(ContainSubstring(b.Command[0]), typ)
			default:
				Expect(a.Command[2:]).To(Equal(b.Command), "%s command", typ)
				Expect(a.Args).To(Equal(b.Args), "%s args", typ)
			}
		}
		Expect(imageBuildMetadata(t, settings.With).DefaultProcess).To(Equal("web"))

		// What pack inspect shows (its LOCAL section; it cannot reach a registry here).
		inspect := run(t, time.Minute, nil, settings.Pack, "inspect", settings.With).Output
		Expect(inspect).To(ContainSubstring("LOCAL:"))
		local := inspect[strings.Index(inspect, "LOCAL:"):]
		for _, typ := range types {
			Expect(local).To(MatchRegexp(`(?m)^\s+%s(\s+\(default\))?\s.*%s`, regexp.QuoteMeta(typ), regexp.QuoteMeta(initPath)), "pack inspect: %s", typ)
		}
	})

	it("passes `docker run IMAGE args` the way the unwrapped image does, and --entrypoint selects types", func() {
		cases := []struct {
			args []string
			exit int
		}{
			{[]string{"--entrypoint", "echo"}, 0},                      // API 0.10: args
			{[]string{"--entrypoint", "echo", "x", "y z"}, 0},          // API 0.10: the user's args replace args
			{[]string{"--entrypoint", "legacy-direct"}, 0},             // API 0.8 direct: args
			{[]string{"--entrypoint", "legacy-direct", "x", "y z"}, 0}, // API 0.8 direct: appended after args
			{[]string{"--entrypoint", "legacy-shell"}, 0},              // API 0.8 shell: bash -c script
			// API 0.8 shell with user args: the launcher makes the whole command one token, which
			// fails the same way with and without the buildpack.
			{[]string{"--entrypoint", "legacy-shell", "x", "y z"}, 127},
		}
		for _, c := range cases {
			without := dockerRun(t, runArgs(c.args, settings.Without)...)
			with := dockerRun(t, runArgs(c.args, settings.With)...)
			t.Logf("docker run %q: without: %q (exit %d); with: %q (exit %d)", c.args, without.Output, without.ExitCode, with.Output, with.ExitCode)
			Expect(without.ExitCode).To(Equal(c.exit), without.Output)
			Expect(with.ExitCode).To(Equal(without.ExitCode), with.Output)
			Expect(with.Output).To(Equal(without.Output), "docker run %q", c.args)
		}
		Expect(dockerRun(t, "--entrypoint", "echo", settings.With, "x", "y z").Stdout).To(Equal("args=[\"x\" \"y z\"] cwd=/workspace/www\n"))
		Expect(dockerRun(t, "--entrypoint", "legacy-direct", settings.With, "x").Stdout).To(Equal("args=[\"legacy-direct\" \"x\"] cwd=/workspace\n"))

		// The default process type (web, API 0.10) with user arguments: they replace its args.
		serveLine := regexp.MustCompile(`serve: pid=\d+ ppid=\d+ (args=.*)`)
		var lines []string
		for _, image := range []string{settings.Without, settings.With} {
			id := startContainer(t, image, "a", "b c")
			logs := waitForLog(t, id, serveLine, 30*time.Second)
			lines = append(lines, serveLine.FindStringSubmatch(logs)[1])
		}
		t.Logf("default process with user args: without: %s; with: %s", lines[0], lines[1])
		Expect(lines[1]).To(Equal(lines[0]))
		Expect(lines[1]).To(Equal(`args=["a" "b c"] cwd=/workspace/www`))
	})
}

// runArgs puts image between the --entrypoint flag and the user's arguments.
func runArgs(c []string, image string) []string {
	args := append([]string{}, c[:2]...)
	args = append(args, image)
	return append(args, c[2:]...)
}

package integration_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

// testConfiguration checks the build-time settings (issue 4, item 9).
func testConfiguration(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	it("leaves the image alone with BP_INIT_ENABLED=false, saying so in the build log", func() {
		image := "pid1-it/disabled:latest"
		r := mustPackBuild(t, image, builderWith, "--env", "BP_INIT_ENABLED=false")
		Expect(r.Output).To(ContainSubstring(disabledLine))
		Expect(processesByType(t, image)).To(Equal(processesByType(t, settings.Without)))
		Expect(pid1Cmdline(t, image)).To(HavePrefix("/workspace/bin/sample-app serve"))
	})

	it("wraps only the types BP_INIT_PROCESS_TYPES names", func() {
		image := "pid1-it/web-only:latest"
		mustPackBuild(t, image, builderWith, "--env", "BP_INIT_PROCESS_TYPES=web")
		before, after := processesByType(t, settings.Without), processesByType(t, image)
		Expect(after["web"].Command).To(Equal(append([]string{initPath, "--"}, before["web"].Command...)))
		Expect(after["web"].Args).To(Equal(before["web"].Args))
		for typ, p := range after {
			if typ == "web" {
				continue
			}
			Expect(p.Command).To(Equal(before[typ].Command), "%s is not wrapped", typ)
			Expect(p.Args).To(Equal(before[typ].Args), "%s", typ)
			Expect(p.WorkingDir).To(Equal(before[typ].WorkingDir), "%s", typ)
		}
	})

	it("warns about a type BP_INIT_PROCESS_TYPES names that no buildpack defines", func() {
		image := "pid1-it/unknown-type:latest"
		r := mustPackBuild(t, image, builderWith, "--env", "BP_INIT_PROCESS_TYPES=web,no-such-type")
		Expect(r.Output).To(ContainSubstring("no-such-type"))
		Expect(processesByType(t, image)["web"].Command[0]).To(Equal(initPath))
	})

	it("fails the build on a bad value, naming the variable and the value", func() {
		// Both ways of use: listed (optional) in the builder, and appended with --buildpack.
		ways := map[string][]string{
			"builder.toml (optional)": {builderWith},
			"--buildpack":             {builderWithout, "--buildpack", "from=builder", "--buildpack", settings.Root, "--trust-extra-buildpacks"},
		}
		results := map[string]result{}
		for way, args := range ways {
			for _, env := range []string{"BP_INIT_ENABLED=maybe", "BP_INIT_PROCESS_TYPES=web;worker"} {
				r := packBuild(t, "pid1-it/bad-value:latest", args[0], append(args[1:], "--env", env)...)
				var errorLines []string
				for _, l := range strings.Split(r.Output, "\n") {
					if strings.Contains(l, "BP_INIT_") || strings.Contains(l, "ERROR") {
						errorLines = append(errorLines, strings.TrimSpace(l))
					}
				}
				t.Logf("%s, %s: pack build exit %d: %q", way, env, r.ExitCode, errorLines)
				results[way+", "+env] = r
			}
		}
		for what, r := range results {
			name, value, _ := strings.Cut(what[strings.LastIndex(what, ", ")+2:], "=")
			Expect(r.Output).To(ContainSubstring(name), what)
			Expect(r.Output).To(ContainSubstring(value), what)
			Expect(r.ExitCode).NotTo(Equal(0), "%s must fail the build", what)
		}
	})
}

func pid1Cmdline(t *testing.T, image string) string {
	t.Helper()
	id := startContainer(t, image)
	waitForLog(t, id, serving, 30*time.Second)
	return pid1(t, containerProcesses(t, id)).Cmdline
}

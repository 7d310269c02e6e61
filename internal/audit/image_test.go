package audit_test

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/pid1-buildpacks/init/internal/audit"
)

func testImage(t *testing.T, context spec.G, it spec.S) {
	Expect := NewWithT(t).Expect

	const (
		ours = "/layers/pid1-buildpacks_init/init/sbin/init"
		web  = `{"type":"web","command":["` + ours + `","--","/workspace/bin/sample-app","serve"],"args":["--name","web"],"direct":true,"buildpackID":"pid1-buildpacks/init"}`
		bare = `{"type":"worker","command":["/workspace/bin/sample-app","leak"],"args":["20ms"],"direct":true,"buildpackID":"samples/processes"}`
	)
	metadata := func(processes ...string) map[string]string {
		list := ""
		for i, p := range processes {
			if i > 0 {
				list += ","
			}
			list += p
		}
		return map[string]string{"io.buildpacks.build.metadata": `{"processes":[` + list + `],"buildpacks":[]}`}
	}

	type tc struct {
		name      string
		labels    map[string]string
		env       []string
		covered   bool
		problems  []string
		processes []audit.ProcessReport
	}
	for _, c := range []tc{
		{name: "every type through our init", labels: metadata(web), covered: true,
			processes: []audit.ProcessReport{{Type: "web", Command: ours, Init: "pid1-buildpacks/init"}}},
		{name: "types through other known inits", covered: true, labels: metadata(
			`{"type":"a","command":["/usr/bin/tini","--","app"],"direct":true}`,
			`{"type":"b","command":["dumb-init","app"],"direct":true}`,
			`{"type":"c","command":["/bin/catatonit","--","app"],"direct":true}`,
			`{"type":"d","command":["tini-static","app"],"direct":true}`),
			processes: []audit.ProcessReport{{Type: "a", Command: "/usr/bin/tini", Init: "tini"}, {Type: "b", Command: "dumb-init", Init: "dumb-init"},
				{Type: "c", Command: "/bin/catatonit", Init: "catatonit"}, {Type: "d", Command: "tini-static", Init: "tini-static"}}},
		{name: "our init under a layers directory the platform moved", labels: metadata(
			`{"type":"web","command":["/cnb-layers/pid1-buildpacks_init/init/sbin/init","--","app"],"direct":true}`),
			env: []string{"CNB_LAYERS_DIR=/cnb-layers"}, covered: true,
			processes: []audit.ProcessReport{{Type: "web", Command: "/cnb-layers/pid1-buildpacks_init/init/sbin/init", Init: "pid1-buildpacks/init"}}},
		{name: "our init at its former path, bin/init, in an image of an earlier version", labels: metadata(
			`{"type":"web","command":["/layers/pid1-buildpacks_init/init/bin/init","--","app"],"direct":true}`),
			covered:   true,
			processes: []audit.ProcessReport{{Type: "web", Command: "/layers/pid1-buildpacks_init/init/bin/init", Init: "pid1-buildpacks/init"}}},
		{name: "tini through env, with its arguments in args", labels: metadata(
			`{"type":"web","command":["/usr/bin/env"],"args":["TZ=UTC","tini","--","app"],"direct":true}`),
			covered:   true,
			processes: []audit.ProcessReport{{Type: "web", Command: "/usr/bin/env", Init: "tini"}}},
		{name: "an app file that is merely named tini", labels: metadata(
			`{"type":"web","command":["/workspace/tini","serve"],"direct":true}`),
			problems:  []string{"process type web starts /workspace/tini, not an init"},
			processes: []audit.ProcessReport{{Type: "web", Command: "/workspace/tini"}}},
		{name: "a type without an init", labels: metadata(web, bare),
			problems:  []string{"process type worker starts /workspace/bin/sample-app, not an init"},
			processes: []audit.ProcessReport{{Type: "web", Command: ours, Init: "pid1-buildpacks/init"}, {Type: "worker", Command: "/workspace/bin/sample-app"}}},
		{name: "a Platform API 0.9 string command through a shell", labels: metadata(`{"type":"task","command":"echo $HOME","direct":false}`),
			problems:  []string{"process type task starts echo, not an init"},
			processes: []audit.ProcessReport{{Type: "task", Command: "echo"}}},
		{name: "BPL_INIT_ENABLED=false in the image", labels: metadata(web), env: []string{"BPL_INIT_ENABLED=False"},
			problems:  []string{"process type web: BPL_INIT_ENABLED=false (the image's environment): the init execs the program in its own place"},
			processes: []audit.ProcessReport{{Type: "web", Command: ours, Init: "pid1-buildpacks/init"}}},
		{name: "our init given --version, which runs no app", labels: metadata(`{"type":"web","command":["` + ours + `","--version"],"direct":true}`),
			problems:  []string{`process type web starts the init as ["` + ours + `" "--version"]: without "--" and a program after it, the init runs no app`},
			processes: []audit.ProcessReport{{Type: "web", Command: ours, Init: "pid1-buildpacks/init"}}},
		{name: "our init alone", labels: metadata(`{"type":"web","command":["` + ours + `"],"direct":true}`),
			problems:  []string{`process type web starts the init as ["` + ours + `"]: without "--" and a program after it, the init runs no app`},
			processes: []audit.ProcessReport{{Type: "web", Command: ours, Init: "pid1-buildpacks/init"}}},
		{name: "our init with -- and nothing after it", labels: metadata(`{"type":"web","command":["` + ours + `","--",""],"direct":true}`),
			problems:  []string{`process type web starts the init as ["` + ours + `" "--" ""]: without "--" and a program after it, the init runs no app`},
			processes: []audit.ProcessReport{{Type: "web", Command: ours, Init: "pid1-buildpacks/init"}}},
		{name: "our init with -- and the program in args, which user arguments replace", labels: metadata(`{"type":"web","command":["` + ours + `"],"args":["--","app"],"direct":true}`),
			problems:  []string{`process type web gives the init "--" and its program in args, which the user's arguments replace (docker run IMAGE ARGS...)`},
			processes: []audit.ProcessReport{{Type: "web", Command: ours, Init: "pid1-buildpacks/init"}}},
		{name: "a Platform API 0.9 string command of our init, whose args the user's arguments extend", covered: true,
			labels:    metadata(`{"type":"web","command":"` + ours + `","args":["--","app"],"direct":true}`),
			processes: []audit.ProcessReport{{Type: "web", Command: ours, Init: "pid1-buildpacks/init"}}},
		{name: "env BPL_INIT_ENABLED=false before our init", labels: metadata(`{"type":"web","command":["env","BPL_INIT_ENABLED=false","` + ours + `","--","app"],"direct":true}`),
			problems:  []string{"process type web: BPL_INIT_ENABLED=false (env BPL_INIT_ENABLED=... before the init): the init execs the program in its own place"},
			processes: []audit.ProcessReport{{Type: "web", Command: "env", Init: "pid1-buildpacks/init"}}},
		{name: "env -u BPL_INIT_ENABLED before our init, in an image that sets it to false", covered: true, env: []string{"BPL_INIT_ENABLED=false"},
			labels:    metadata(`{"type":"web","command":["/usr/bin/env","-u","BPL_INIT_ENABLED","` + ours + `","--","app"],"direct":true}`),
			processes: []audit.ProcessReport{{Type: "web", Command: "/usr/bin/env", Init: "pid1-buildpacks/init"}}},
		{name: "a grace period the init refuses", labels: metadata(web), env: []string{"BPL_INIT_GRACE_PERIOD=-3s"},
			problems:  []string{`process type web: the init refuses to start: invalid BPL_INIT_GRACE_PERIOD="-3s": expected a non-negative Go duration (10s, 1m30s, 500ms) or whole seconds (10) (BPL_INIT_GRACE_PERIOD from the image's environment)`},
			processes: []audit.ProcessReport{{Type: "web", Command: ours, Init: "pid1-buildpacks/init"}}},
		{name: "our init through a shell script", labels: metadata(`{"type":"web","command":["sh","-c","exec ` + ours + ` -- app"],"direct":true}`),
			problems:  []string{"process type web starts the init through sh: the audit cannot check that it runs a program"},
			processes: []audit.ProcessReport{{Type: "web", Command: "sh", Init: "pid1-buildpacks/init"}}},
		{name: "an image without process types", labels: metadata(), problems: []string{"the image has no process types"}},
	} {
		c := c
		it("reports "+c.name, func() {
			r, err := audit.Image("i", syntheticImage(t, c.labels, c.env...))
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Covered).To(Equal(c.covered))
			Expect(r.Problems).To(Equal(c.problems))
			Expect(r.Processes).To(Equal(c.processes))
		})
	}

	it("reports an entrypoint that is not the launcher", func() {
		img := withConfig(t, syntheticImage(t, metadata(web)), func(c *v1.Config) { c.Entrypoint = []string{"/bin/sh", "-c"} })
		r, err := audit.Image("i", img)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Covered).To(BeFalse())
		Expect(r.Problems).To(Equal([]string{"the image's entrypoint is /bin/sh, not the launcher (/cnb/lifecycle/launcher or a /cnb/process/ link to it): no process type starts as the image says"}))
	})

	// An app image's files: the launcher's metadata.toml, its /cnb/process/ links, the layers' env.
	const metadataTOML = "layers/config/metadata.toml"
	webTOML := "[[buildpacks]]\n  id = \"samples/processes\"\n[[buildpacks]]\n  id = \"pid1-buildpacks/init\"\n" +
		"[[processes]]\n  type = \"web\"\n  command = [\"" + ours + "\", \"--\", \"/workspace/bin/sample-app\", \"serve\"]\n  args = [\"--name\", \"web\"]\n  direct = true\n" +
		"[[processes]]\n  type = \"worker\"\n  command = [\"" + ours + "\", \"--\", \"/workspace/bin/sample-app\", \"leak\"]\n  direct = true\n"
	worker := `{"type":"worker","command":["` + ours + `","--","/workspace/bin/sample-app","leak"],"direct":true}`
	type files struct {
		name       string
		labels     map[string]string
		entrypoint string
		layers     []map[string]string
		problems   []string
		warnings   []string
	}
	// The launcher's and the init buildpack's layers, as the exporter makes them.
	exported := map[string]string{"cnb/lifecycle/launcher": "ELF", "layers/pid1-buildpacks_init/init/sbin/init": "ELF"}
	for _, c := range []files{
		{name: "a /cnb/process/ link to the launcher", labels: metadata(web, worker), entrypoint: "/cnb/process/web",
			layers: []map[string]string{{metadataTOML: webTOML, "cnb/lifecycle/launcher": "ELF", "cnb/process/web": "->../lifecycle/launcher"}}},
		{name: "a /cnb/process/ entrypoint that is not a link to the launcher", labels: metadata(web, worker), entrypoint: "/cnb/process/web",
			layers:   []map[string]string{{metadataTOML: webTOML, "cnb/lifecycle/launcher": "ELF", "cnb/process/web": "#!/bin/sh"}},
			problems: []string{"the image's entrypoint is /cnb/process/web, not the launcher (/cnb/lifecycle/launcher or a /cnb/process/ link to it): no process type starts as the image says"}},
		{name: "BPL_INIT_ENABLED=false in a layer's env.launch (unsuffixed: an override)", labels: metadata(web, worker),
			layers: []map[string]string{{metadataTOML: webTOML, "layers/samples_processes/runtime/env.launch/BPL_INIT_ENABLED": "false"}},
			problems: []string{"process type web: BPL_INIT_ENABLED=false (/layers/samples_processes/runtime/env.launch/BPL_INIT_ENABLED): the init execs the program in its own place",
				"process type worker: BPL_INIT_ENABLED=false (/layers/samples_processes/runtime/env.launch/BPL_INIT_ENABLED): the init execs the program in its own place"}},
		{name: "BPL_INIT_ENABLED=false for one type, in a file with an empty suffix (prepended)", labels: metadata(web, worker),
			layers:   []map[string]string{{metadataTOML: webTOML, "layers/samples_processes/runtime/env.launch/worker/BPL_INIT_ENABLED.": "false"}},
			problems: []string{"process type worker: BPL_INIT_ENABLED=false (/layers/samples_processes/runtime/env.launch/worker/BPL_INIT_ENABLED.): the init execs the program in its own place"}},
		{name: "BPL_INIT_ENABLED=false for one type, in env.launch/<type>", labels: metadata(web, worker),
			layers:   []map[string]string{{metadataTOML: webTOML, "layers/samples_processes/runtime/env.launch/worker/BPL_INIT_ENABLED.override": "false"}},
			problems: []string{"process type worker: BPL_INIT_ENABLED=false (/layers/samples_processes/runtime/env.launch/worker/BPL_INIT_ENABLED.override): the init execs the program in its own place"}},
		{name: "a log level appended to in a layer's env, which the init refuses", labels: metadata(web, worker), layers: []map[string]string{{metadataTOML: webTOML,
			"layers/samples_processes/runtime/env/BPL_INIT_LOG_LEVEL.append": "debug", "layers/samples_processes/runtime/env/BPL_INIT_LOG_LEVEL.delim": ","}},
			problems: []string{
				`process type web: the init refuses to start: invalid BPL_INIT_LOG_LEVEL="info,debug": expected error, info or debug (BPL_INIT_LOG_LEVEL from /layers/samples_processes/runtime/env/BPL_INIT_LOG_LEVEL.append)`,
				`process type worker: the init refuses to start: invalid BPL_INIT_LOG_LEVEL="info,debug": expected error, info or debug (BPL_INIT_LOG_LEVEL from /layers/samples_processes/runtime/env/BPL_INIT_LOG_LEVEL.append)`}},
		{name: "a label that says our init where metadata.toml, which the launcher reads, does not", labels: metadata(web, worker),
			layers:   []map[string]string{{metadataTOML: strings.Replace(webTOML, `"`+ours+`", "--", "/workspace/bin/sample-app", "leak"`, `"/workspace/bin/sample-app", "leak"`, 1)}},
			problems: []string{"process type worker starts /workspace/bin/sample-app, not an init"},
			warnings: []string{"label io.buildpacks.build.metadata differs from /layers/config/metadata.toml, which the launcher reads and this audit judges"}},
		{name: "an image without metadata.toml", labels: metadata(web, worker), layers: []map[string]string{{"etc/hostname": "x"}},
			problems: []string{"the image has no /layers/config/metadata.toml, which the launcher reads: no process type starts"}},
	} {
		c := c
		it("reads the image's files: "+c.name, func() {
			img := withLayers(t, syntheticImage(t, c.labels, "BPL_INIT_LOG_LEVEL=info"), append([]map[string]string{exported}, c.layers...)...)
			if c.entrypoint != "" {
				img = withConfig(t, img, func(cfg *v1.Config) { cfg.Entrypoint = []string{c.entrypoint} })
			}
			r, err := audit.Image("i", img)
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Problems).To(Equal(c.problems))
			Expect(r.Warnings).To(Equal(c.warnings))
			Expect(r.Covered).To(Equal(len(c.problems) == 0))
		})
	}

	context("when a layer on top replaces what the lifecycle exported", func() {
		var img v1.Image
		it.Before(func() {
			img = withLayers(t, syntheticImage(t, metadata(web, worker)), exported, map[string]string{metadataTOML: webTOML})
			cfg, err := img.ConfigFile()
			Expect(err).NotTo(HaveOccurred())
			label := `{"launcher":{"sha":"` + cfg.RootFS.DiffIDs[0].String() + `"},"buildpacks":[{"key":"pid1-buildpacks/init","layers":{"init":{"sha":"` + cfg.RootFS.DiffIDs[0].String() + `"}}}]}`
			img = withConfig(t, img, func(c *v1.Config) { c.Labels["io.buildpacks.lifecycle.metadata"] = label })
		})

		it("is covered as exported", func() {
			r, err := audit.Image("i", img)
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Problems).To(BeEmpty())
		})

		it("reports an init replaced by a script", func() {
			r, err := audit.Image("i", withLayers(t, img, map[string]string{"layers/pid1-buildpacks_init/init/sbin/init": "#!/bin/sh\nshift; exec \"$@\""}))
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Covered).To(BeFalse())
			Expect(r.Problems).To(ConsistOf(MatchRegexp(`^the init /layers/pid1-buildpacks_init/init/sbin/init is written by layer 3 \(sha256:[0-9a-f]+\), not by the layer label io.buildpacks.lifecycle.metadata records`)))
		})

		it("reports a launcher replaced by a script", func() {
			r, err := audit.Image("i", withLayers(t, img, map[string]string{"cnb/lifecycle/launcher": "#!/bin/sh\nexec /workspace/bin/sample-app serve"}))
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Problems).To(ConsistOf(MatchRegexp(`^the launcher /cnb/lifecycle/launcher is written by layer 3 `)))
		})

		it("reports an init a later layer removes", func() {
			r, err := audit.Image("i", withLayers(t, img, map[string]string{"layers/pid1-buildpacks_init/.wh.init": ""}))
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Problems).To(Equal([]string{"the init /layers/pid1-buildpacks_init/init/sbin/init is not in the image: the container cannot start it"}))
		})

		it("reports a command the launcher, started as itself, runs without the init", func() {
			r, err := audit.Image("i", withConfig(t, img, func(c *v1.Config) { c.Cmd = []string{"/workspace/bin/sample-app", "echo"} }))
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Problems).To(Equal([]string{`docker run starts ["/workspace/bin/sample-app" "echo"]: the launcher, started as /cnb/lifecycle/launcher, has no default process type and runs it without the init`}))
		})

		it("reports an entrypoint that gives the launcher a command", func() {
			r, err := audit.Image("i", withConfig(t, img, func(c *v1.Config) { c.Entrypoint = []string{"/cnb/lifecycle/launcher", "sh"} }))
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Covered).To(BeFalse())
		})
	})

	type bad struct {
		name     string
		labels   map[string]string
		expected string
	}
	for _, c := range []bad{
		{name: "an image not built with buildpacks", labels: map[string]string{},
			expected: "not an app image built with buildpacks: it has no label io.buildpacks.build.metadata"},
		{name: "an unreadable label", labels: map[string]string{"io.buildpacks.build.metadata": "[]"},
			expected: "unable to read label io.buildpacks.build.metadata: "},
		{name: "a command that is neither an array nor a string", labels: metadata(`{"type":"web","command":7}`),
			expected: `process type "web": command 7: expected an array of strings or a string`},
		{name: "an empty command", labels: metadata(`{"type":"web","command":[]}`),
			expected: `process type "web": empty command`},
	} {
		c := c
		it("rejects "+c.name+", naming what is wrong", func() {
			_, err := audit.Image("i", syntheticImage(t, c.labels))
			Expect(err).To(MatchError(ContainSubstring(c.expected)))
		})
	}
}

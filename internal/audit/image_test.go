package audit_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"

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
			problems:  []string{"BPL_INIT_ENABLED=false in the image's environment: the init execs each program in its own place"},
			processes: []audit.ProcessReport{{Type: "web", Command: ours, Init: "pid1-buildpacks/init"}}},
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

package launch_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"

	"github.com/pid1-buildpacks/init/internal/launch"
	"github.com/pid1-buildpacks/init/internal/tabletest"
)

func testMerge(t *testing.T, context spec.G, it spec.S) {
	Expect := NewWithT(t).Expect

	proc := func(bp, typ, cmd string, isDefault bool) launch.Process {
		return launch.Process{Type: typ, Command: []string{cmd}, Direct: true, Default: isDefault, BuildpackID: bp, API: "0.10"}
	}

	it("lets a later buildpack replace a type whole and sorts by type", func() {
		early := proc("a", "web", "early", false)
		early.Args = []string{"x"}
		early.WorkingDirectory = "/w"
		late := proc("b", "web", "late", false)

		m := launch.Merge([][]launch.Process{{early, proc("a", "worker", "w", false)}, {late}})
		Expect(m.Processes).To(Equal([]launch.Process{late, proc("a", "worker", "w", false)}))
		Expect(m.DefaultType).To(BeEmpty())
	})

	type defaults struct {
		sets     [][]launch.Process
		expected string
	}
	for name, tc := range tabletest.Sorted(map[string]defaults{
		"the only default": {
			sets:     [][]launch.Process{{proc("a", "web", "x", true)}},
			expected: "web",
		},
		"the last default wins": {
			sets:     [][]launch.Process{{proc("a", "web", "x", true)}, {proc("b", "worker", "y", true)}},
			expected: "worker",
		},
		"a non-default redefinition of the default type clears it": {
			sets:     [][]launch.Process{{proc("a", "web", "x", true)}, {proc("b", "web", "y", false)}},
			expected: "",
		},
		"a non-default redefinition of another type keeps it": {
			sets: [][]launch.Process{
				{proc("a", "web", "x", true)}, {proc("b", "worker", "w", true)},
				{proc("c", "web", "y", false)},
			},
			expected: "worker",
		},
		"a default set again after being cleared": {
			sets: [][]launch.Process{
				{proc("a", "web", "x", true)}, {proc("b", "web", "y", false)}, {proc("c", "web", "z", true)},
			},
			expected: "web",
		},
		"no default": {
			sets:     [][]launch.Process{{proc("a", "web", "x", false)}},
			expected: "",
		},
	}) {
		tc := tc
		it("computes the default type: "+name, func() {
			Expect(launch.Merge(tc.sets).DefaultType).To(Equal(tc.expected))
		})
	}

	it("merges nothing into nothing", func() {
		m := launch.Merge(nil)
		Expect(m.Processes).To(BeEmpty())
		Expect(m.DefaultType).To(BeEmpty())
	})
}

package rewrite_test

import (
	"runtime"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"

	"github.com/pid1-buildpacks/init/internal/launch"
	"github.com/pid1-buildpacks/init/internal/rewrite"
)

// testHostile feeds ExistingInit commands made to cost: what it reads must grow linearly with
// the command, since it runs on other buildpacks' launch.toml at build time and on image labels
// in bin/audit.
func testHostile(t *testing.T, context spec.G, it spec.S) {
	Expect := NewWithT(t).Expect

	// allocated returns the bytes ExistingInit allocates on command.
	allocated := func(command []string) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		name, ok := rewrite.ExistingInit(launch.Process{Type: "web", Command: command, Direct: true}, "/workspace", initPath)
		runtime.ReadMemStats(&after)
		Expect(ok).To(BeTrue())
		Expect(name).To(Equal("tini"))
		return after.TotalAlloc - before.TotalAlloc
	}
	type tc struct {
		name   string
		repeat []string
	}
	for _, c := range []tc{
		{name: "env -S -i repeated", repeat: []string{"-S", "-i"}},
		{name: "env -S '-i -S' -i repeated, each -S string ending in a -S that takes the next argument", repeat: []string{"-S", "-i -S", "-i"}},
		{name: "env --split-string=-i repeated", repeat: []string{"--split-string=-i"}},
	} {
		c := c
		it("reads "+c.name+" in memory linear in the arguments", func() {
			command := func(n int) []string {
				words := []string{"env"}
				for len(words) < n {
					words = append(words, c.repeat...)
				}
				return append(words, "tini", "--", "app")
			}
			small, large := allocated(command(2000)), allocated(command(8000))
			// Four times the arguments: about four times the bytes when linear, sixteen when
			// each -S copies the arguments after it.
			Expect(large).To(BeNumerically("<", 8*small), "2,000 arguments: %d bytes, 8,000: %d bytes", small, large)
		})
	}
}

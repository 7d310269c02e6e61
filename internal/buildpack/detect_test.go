package buildpack_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

func testDetect(t *testing.T, context spec.G, it spec.S) {
	var (
		Expect = NewWithT(t).Expect
		w      *workspace
	)

	it.Before(func() {
		w = newWorkspace(t)
	})

	it("passes for any application, requiring and providing nothing", func() {
		out, exit := w.detect()
		Expect(exit.err).NotTo(HaveOccurred())
		Expect(exit.passed).To(BeTrue())
		Expect(out).To(BeEmpty())
		Expect(w.root + "/build-plan.toml").NotTo(BeAnExistingFile())
	})

	it("passes when BP_INIT_ENABLED is true", func() {
		t.Setenv("BP_INIT_ENABLED", "true")
		_, exit := w.detect()
		Expect(exit.passed).To(BeTrue())
	})

	// A system buildpack, or one appended with pack build --buildpack, is a required member of
	// the group: failing detection would fail the whole build.
	it("passes, silently, when BP_INIT_ENABLED is false", func() {
		t.Setenv("BP_INIT_ENABLED", "false")
		out, exit := w.detect()
		Expect(exit.err).NotTo(HaveOccurred())
		Expect(exit.passed).To(BeTrue())
		Expect(exit.failed).To(BeFalse())
		Expect(out).To(BeEmpty())
	})

	// An optional buildpack whose detection errors is skipped by the lifecycle without failing
	// the build, so a bad value passes detection, says so, and is rejected by build.
	it("passes, naming the variable and the accepted values, for BP_INIT_ENABLED=maybe", func() {
		t.Setenv("BP_INIT_ENABLED", "maybe")
		out, exit := w.detect()
		Expect(exit.err).NotTo(HaveOccurred())
		Expect(exit.passed).To(BeTrue())
		Expect(out).To(ContainSubstring(`invalid BP_INIT_ENABLED "maybe": expected true or false: the build will fail`))
	})

	it("passes, naming the variable, for a bad BP_INIT_PROCESS_TYPES", func() {
		t.Setenv("BP_INIT_PROCESS_TYPES", "web,,worker")
		out, exit := w.detect()
		Expect(exit.err).NotTo(HaveOccurred())
		Expect(exit.passed).To(BeTrue())
		Expect(out).To(ContainSubstring("invalid BP_INIT_PROCESS_TYPES"))
	})
}

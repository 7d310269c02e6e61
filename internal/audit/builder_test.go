package audit_test

import (
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"

	"github.com/pid1-buildpacks/init/internal/audit"
)

func testBuilder(t *testing.T, context spec.G, it spec.S) {
	Expect := NewWithT(t).Expect

	const (
		initLast     = `[{"group":[{"id":"samples/legacy","version":"0.0.1"},{"id":"samples/processes","version":"0.0.1"},{"id":"pid1-buildpacks/init","version":"0.1.0","optional":true}]},{"group":[{"id":"samples/processes","version":"0.0.1"},{"id":"pid1-buildpacks/init","version":"0.1.0","optional":true}]}]`
		noInit       = `[{"group":[{"id":"samples/legacy","version":"0.0.1"},{"id":"samples/processes","version":"0.0.1"}]},{"group":[{"id":"samples/processes","version":"0.0.1"}]}]`
		oneWithout   = `[{"group":[{"id":"samples/legacy"},{"id":"pid1-buildpacks/init"}]},{"group":[{"id":"samples/processes"}]}]`
		initNotLast  = `[{"group":[{"id":"pid1-buildpacks/init"},{"id":"samples/processes","version":"0.0.1"}]}]`
		systemPost   = `{"pre":{"buildpacks":[]},"post":{"buildpacks":[{"id":"pid1-buildpacks/init","version":"0.1.0"}]}}`
		systemPre    = `{"pre":{"buildpacks":[{"id":"pid1-buildpacks/init","version":"0.1.0"}]},"post":{"buildpacks":[]}}`
		systemBefore = `{"post":{"buildpacks":[{"id":"pid1-buildpacks/init","version":"0.1.0"},{"id":"other/post","version":"1.0.0"}]}}`
		optOut       = "app developers can opt out with BP_INIT_ENABLED=false"
	)

	const (
		all     = "on Platform API 0.7 to 0.15 of lifecycle 0.21.11: "
		lastAll = "pid1-buildpacks/init is the last buildpack of every order group (2)"
		ignored = "[system.post] is ignored below Platform API 0.15: kpack, Tekton, pack < 0.40; list pid1-buildpacks/init last in every order group too"
		below15 = "Platform API 0.7 to 0.14: "
	)
	type tc struct {
		name     string
		labels   map[string]string
		platform string
		covered  bool
		summary  string
		problems []string
		warnings []string
	}
	for _, c := range []tc{
		{name: "the init last in every group", labels: builderLabels("0.21.11", "0.15", initLast, ""), covered: true,
			summary: all + lastAll + "; " + optOut},
		{name: "the init last in every group on lifecycle 0.18", labels: builderLabels("0.18.5", "0.12", initLast, ""), covered: true,
			summary: "on Platform API 0.7 to 0.12 of lifecycle 0.18.5: " + lastAll + "; " + optOut},
		{name: "the init last in every group and in [system.post]", labels: builderLabels("0.21.11", "0.15", initLast, systemPost), covered: true,
			summary: all + lastAll + ", and [system.post], which the lifecycle skips in a group that lists it; " + optOut},
		{name: "[system.post] only, on every Platform API", labels: builderLabels("0.21.11", "0.15", noInit, systemPost), problems: []string{ignored,
			below15 + "order group 1 (samples/legacy, samples/processes): pid1-buildpacks/init is not in it",
			below15 + "order group 2 (samples/processes): pid1-buildpacks/init is not in it"}},
		{name: "[system.post] only, at Platform API 0.9 (kpack)", labels: builderLabels("0.21.11", "0.15", noInit, systemPost), platform: "0.9", problems: []string{ignored,
			"Platform API 0.9: order group 1 (samples/legacy, samples/processes): pid1-buildpacks/init is not in it",
			"Platform API 0.9: order group 2 (samples/processes): pid1-buildpacks/init is not in it"}},
		{name: "[system.post] only, at Platform API 0.15", labels: builderLabels("0.21.11", "0.15", noInit, systemPost), platform: "0.15", covered: true,
			summary: "on Platform API 0.15 of lifecycle 0.21.11: [system.post] appends pid1-buildpacks/init@0.1.0 to every order group; " + optOut},
		{name: "the init last in every group, at Platform API 0.9 (kpack)", labels: builderLabels("0.21.11", "0.15", initLast, ""), platform: "0.9", covered: true,
			summary: "on Platform API 0.9 of lifecycle 0.21.11: " + lastAll + "; " + optOut},
		{name: "the init first in a group with [system.post], whose copy the lifecycle skips", labels: builderLabels("0.21.11", "0.15", initNotLast, systemPost), problems: []string{ignored,
			below15 + "order group 1 (pid1-buildpacks/init, samples/processes): samples/processes@0.0.1 comes after pid1-buildpacks/init: its process types are not wrapped",
			"Platform API 0.15: order group 1 (pid1-buildpacks/init, samples/processes): samples/processes@0.0.1 comes after pid1-buildpacks/init: its process types are not wrapped (the lifecycle skips [system.post]'s copy of a buildpack the group lists)",
		}},
		{name: "no init anywhere", labels: builderLabels("0.21.11", "0.15", noInit, ""), problems: []string{
			"order group 1 (samples/legacy, samples/processes): pid1-buildpacks/init is not in it",
			"order group 2 (samples/processes): pid1-buildpacks/init is not in it"}},
		{name: "one group without the init", labels: builderLabels("0.21.11", "0.15", oneWithout, `{"pre":{},"post":{}}`), problems: []string{
			"order group 2 (samples/processes): pid1-buildpacks/init is not in it"}},
		{name: "[system.post] on lifecycle 0.20 (Platform API 0.14), which ignores it", labels: builderLabels("0.20.12", "0.14", noInit, systemPost), problems: []string{
			"[system.post] lists pid1-buildpacks/init@0.1.0, but lifecycle 0.20.12 supports Platform API 0.14 at most: system buildpacks need Platform API 0.15 (lifecycle 0.21 or newer), and this lifecycle ignores them without a word",
			"order group 1 (samples/legacy, samples/processes): pid1-buildpacks/init is not in it",
			"order group 2 (samples/processes): pid1-buildpacks/init is not in it"}},
		{name: "[system.post] on lifecycle 0.20 with the init also last in every group", labels: builderLabels("0.20.12", "0.14", initLast, systemPost), covered: true,
			summary: "on Platform API 0.7 to 0.14 of lifecycle 0.20.12: " + lastAll + "; " + optOut},
		{name: "the init in [system.pre]", labels: builderLabels("0.21.11", "0.15", `[{"group":[{"id":"samples/processes"}]}]`, systemPre), problems: []string{
			"[system.pre] lists pid1-buildpacks/init: it runs before the app's buildpacks and wraps none of their process types; list it in [system.post]",
			below15 + "order group 1 (samples/processes): pid1-buildpacks/init is not in it",
			"Platform API 0.15: order group 1 (samples/processes): samples/processes comes after pid1-buildpacks/init: its process types are not wrapped"}},
		{name: "another system buildpack after the init", labels: builderLabels("0.21.11", "0.15", `[{"group":[{"id":"samples/processes"}]}]`, systemBefore), platform: "0.15", problems: []string{
			"[system.post] lists other/post@1.0.0 after pid1-buildpacks/init@0.1.0: their process types are not wrapped; list pid1-buildpacks/init last",
			"Platform API 0.15: order group 1 (samples/processes): other/post@1.0.0 comes after pid1-buildpacks/init: its process types are not wrapped"}},
		{name: "an empty order", labels: builderLabels("0.21.11", "0.15", `[]`, ""), problems: []string{"the builder has no order group"}},
	} {
		c := c
		it("reports "+c.name, func() {
			r, err := audit.Builder("b", syntheticImage(t, c.labels), c.platform)
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Problems).To(Equal(c.problems))
			Expect(r.Covered).To(Equal(c.covered))
			Expect(r.Summary).To(Equal(c.summary))
			Expect(r.Warnings).To(Equal(c.warnings))
		})
	}

	it("gives the verdict at each Platform API", func() {
		r, err := audit.Builder("b", syntheticImage(t, builderLabels("0.21.11", "0.15", noInit, systemPost)), "")
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Platforms).To(HaveLen(9))
		for _, p := range r.Platforms {
			Expect(p.Covered).To(Equal(p.PlatformAPI == "0.15"), p.PlatformAPI)
		}
	})

	it("rejects a Platform API the lifecycle does not support", func() {
		_, err := audit.Builder("b", syntheticImage(t, builderLabels("0.20.12", "0.14", initLast, "")), "0.15")
		Expect(err).To(MatchError("lifecycle 0.20.12 does not support Platform API 0.15: it supports 0.7, 0.8, 0.9, 0.10, 0.11, 0.12, 0.13, 0.14"))
	})

	// The build-config environment pack writes for [[build.env]], in a layer of the builder, as
	// the lifecycle applies it (env.WithOverrides) after the app developer's value.
	type lock struct {
		name     string
		layers   []map[string]string
		covered  bool
		optOut   string
		problems []string
		warnings []string
	}
	const envDir = "cnb/build-config/env/"
	for _, c := range []lock{
		{name: "the override lock", covered: true, optOut: "BP_INIT_ENABLED=false is ignored (/cnb/build-config/env/BP_INIT_ENABLED.override)",
			layers: []map[string]string{{envDir + "BP_INIT_ENABLED.override": "true"}}},
		{name: "the override lock under a later default", covered: true,
			optOut: "BP_INIT_ENABLED=false is ignored (/cnb/build-config/env/BP_INIT_ENABLED.default, /cnb/build-config/env/BP_INIT_ENABLED.override)",
			layers: []map[string]string{{"/" + envDir + "BP_INIT_ENABLED.override": "TRUE\n"}, {envDir + "BP_INIT_ENABLED.default": "false"}}},
		{name: "a default of true, which app developers can change", covered: true,
			optOut: "app developers can opt out with BP_INIT_ENABLED=false (/cnb/build-config/env/BP_INIT_ENABLED: a default)",
			layers: []map[string]string{{envDir + "BP_INIT_ENABLED": "true"}}},
		{name: "a file named with an empty suffix (the lifecycle prepends it, joined by ':')", layers: []map[string]string{{envDir + "BP_INIT_ENABLED.": "false"}},
			problems: []string{`/cnb/build-config/env/BP_INIT_ENABLED. sets BP_INIT_ENABLED="false" unless the app developer sets it: images are not wrapped by default`}},
		{name: "an append of false", layers: []map[string]string{{envDir + "BP_INIT_ENABLED.append": "false"}},
			problems: []string{`/cnb/build-config/env/BP_INIT_ENABLED.append sets BP_INIT_ENABLED="false" unless the app developer sets it: images are not wrapped by default`}},
		{name: "a prepend of false", layers: []map[string]string{{envDir + "BP_INIT_ENABLED.prepend": "false"}},
			problems: []string{`/cnb/build-config/env/BP_INIT_ENABLED.prepend sets BP_INIT_ENABLED="false" unless the app developer sets it: images are not wrapped by default`}},
		{name: "a prepend of true, which makes an opt-out fail the build", covered: true, layers: []map[string]string{{envDir + "BP_INIT_ENABLED.prepend": "true"}},
			optOut:   `BP_INIT_ENABLED=false fails the build (/cnb/build-config/env/BP_INIT_ENABLED.prepend sets it to "truefalse")`,
			warnings: []string{`BP_INIT_ENABLED=true set by the app developer becomes "truetrue" (/cnb/build-config/env/BP_INIT_ENABLED.prepend)`}},
		{name: "an override of false hidden by a whiteout in a later layer", covered: true, optOut: optOut,
			layers: []map[string]string{{envDir + "BP_INIT_ENABLED.override": "false"}, {envDir + ".wh.BP_INIT_ENABLED.override": ""}}},
		{name: "an override of false behind a symbolic link", layers: []map[string]string{{"cnb/off": "false"}, {envDir + "BP_INIT_ENABLED.override": "->../../off"}},
			problems: []string{`/cnb/build-config/env/BP_INIT_ENABLED.override sets BP_INIT_ENABLED="false" unless the app developer sets it: images are not wrapped by default`}},
		{name: "an override of BP_INIT_PROCESS_TYPES that names one type", layers: []map[string]string{{envDir + "BP_INIT_PROCESS_TYPES.override": "none"}},
			problems: []string{`/cnb/build-config/env/BP_INIT_PROCESS_TYPES.override sets BP_INIT_PROCESS_TYPES="none": only process type none is wrapped, every other process type starts without the init`}},
		{name: "an override of BP_INIT_PROCESS_TYPES that names no type", layers: []map[string]string{{envDir + "BP_INIT_PROCESS_TYPES.override": ","}},
			problems: []string{`/cnb/build-config/env/BP_INIT_PROCESS_TYPES.override sets BP_INIT_PROCESS_TYPES=",", which names no process type: every build fails`}},
		{name: "an override of BP_INIT_PROCESS_TYPES of every type", covered: true, optOut: optOut,
			layers: []map[string]string{{envDir + "BP_INIT_PROCESS_TYPES.override": "*"}}},
		{name: "an override of false", layers: []map[string]string{{envDir + "BP_INIT_ENABLED.override": "false"}},
			problems: []string{`/cnb/build-config/env/BP_INIT_ENABLED.override sets BP_INIT_ENABLED="false" unless the app developer sets it: images are not wrapped by default`}},
		{name: "a default of false", layers: []map[string]string{{envDir + "BP_INIT_ENABLED.default": "false"}},
			problems: []string{`/cnb/build-config/env/BP_INIT_ENABLED.default sets BP_INIT_ENABLED="false" unless the app developer sets it: images are not wrapped by default`}},
		{name: "a bad value", layers: []map[string]string{{envDir + "BP_INIT_ENABLED.override": "yes"}},
			problems: []string{`/cnb/build-config/env/BP_INIT_ENABLED.override sets BP_INIT_ENABLED="yes", which is not true or false: every build fails`}},
		{name: "an unknown suffix, which the lifecycle ignores", covered: true, optOut: optOut,
			layers: []map[string]string{{envDir + "BP_INIT_ENABLED.overide": "false"}}},
	} {
		c := c
		it("reads the build-config environment: "+c.name, func() {
			img := withLayers(t, syntheticImage(t, builderLabels("0.21.11", "0.15", initLast, "")), c.layers...)
			r, err := audit.Builder("b", img, "")
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Problems).To(Equal(c.problems))
			Expect(r.Covered).To(Equal(c.covered))
			Expect(r.OptOut).To(Equal(c.optOut))
			Expect(r.Warnings).To(Equal(c.warnings))
			if c.covered {
				Expect(r.Summary).To(HaveSuffix("; " + c.optOut))
			}
		})
	}

	it("reads /cnb/order.toml and /cnb/system.toml, which the lifecycle reads, over the labels", func() {
		img := withLayers(t, syntheticImage(t, builderLabels("0.21.11", "0.15", initLast, "")), map[string]string{
			"cnb/order.toml":  "[[order]]\n[[order.group]]\nid = \"samples/processes\"\n",
			"cnb/system.toml": "[system]\n[[system.post.buildpacks]]\nid = \"pid1-buildpacks/init\"\n",
		})
		r, err := audit.Builder("b", img, "")
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Covered).To(BeFalse())
		Expect(r.Problems).To(Equal([]string{ignored, below15 + "order group 1 (samples/processes): pid1-buildpacks/init is not in it"}))
		Expect(r.Warnings).To(Equal([]string{
			"label io.buildpacks.buildpack.order differs from /cnb/order.toml, which the lifecycle reads and this audit judges",
			"label io.buildpacks.buildpack.system differs from /cnb/system.toml, which the lifecycle reads and this audit judges"}))
	})

	context("when a layer on top replaces the init buildpack pack put in the builder", func() {
		const bpDir = "cnb/buildpacks/pid1-buildpacks_init/0.1.0/"
		var img v1.Image
		it.Before(func() {
			img = withLayers(t, syntheticImage(t, builderLabels("0.21.11", "0.15", initLast, "")),
				map[string]string{bpDir + "buildpack.toml": "api = \"0.10\"", bpDir + "bin/main": "ELF", bpDir + "bin/init": "ELF", bpDir + "bin/build": "->main", bpDir + "bin/detect": "->main"})
			cfg, err := img.ConfigFile()
			Expect(err).NotTo(HaveOccurred())
			img = withConfig(t, img, func(c *v1.Config) {
				c.Labels["io.buildpacks.buildpack.layers"] = `{"pid1-buildpacks/init":{"0.1.0":{"api":"0.10","layerDiffID":"` + cfg.RootFS.DiffIDs[0].String() + `"}}}`
			})
		})

		it("is covered as pack made it", func() {
			r, err := audit.Builder("b", img, "")
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Problems).To(BeEmpty())
		})

		it("reports a bin/build that does nothing", func() {
			r, err := audit.Builder("b", withLayers(t, img, map[string]string{bpDir + "bin/main": "#!/bin/sh\nexit 0"}), "")
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Covered).To(BeFalse())
			Expect(r.Problems).To(ConsistOf(MatchRegexp(`^pid1-buildpacks/init's /cnb/buildpacks/pid1-buildpacks_init/0.1.0/bin/main is written by layer 2 \(sha256:[0-9a-f]+\), not by the layer label io.buildpacks.buildpack.layers records`)))
		})

		it("reports an init binary replaced in the buildpack", func() {
			r, err := audit.Builder("b", withLayers(t, img, map[string]string{bpDir + "bin/init": "#!/bin/sh"}), "")
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Problems).To(ConsistOf(MatchRegexp(`^pid1-buildpacks/init's /cnb/buildpacks/pid1-buildpacks_init/0.1.0/bin/init is written by layer 2 `)))
		})

		it("reports a version the builder does not hold", func() {
			r, err := audit.Builder("b", withLayers(t, img, map[string]string{"cnb/buildpacks/pid1-buildpacks_init/.wh.0.1.0": ""}), "")
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Problems).To(ContainElement("pid1-buildpacks/init's /cnb/buildpacks/pid1-buildpacks_init/0.1.0/bin/build is not in the image: the container cannot start it"))
		})
	})

	it("reports each group, how it is covered or why not", func() {
		r, err := audit.Builder("b", syntheticImage(t, builderLabels("0.21.11", "0.15", oneWithout, "")), "")
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Lifecycle).To(Equal("0.21.11"))
		Expect(r.PlatformAPI).To(Equal("0.15"))
		Expect(r.Groups).To(Equal([]audit.GroupReport{
			{Index: 1, Buildpacks: []string{"samples/legacy", "pid1-buildpacks/init"}, Covered: true, Reason: "pid1-buildpacks/init is last"},
			{Index: 2, Buildpacks: []string{"samples/processes"}, Reason: "pid1-buildpacks/init is not in it"},
		}))
	})

	it("reads the legacy single Platform API of an old builder", func() {
		labels := builderLabels("0.9.0", "0.7", initLast, systemPost)
		labels["io.buildpacks.builder.metadata"] = `{"lifecycle":{"version":"0.9.0","api":{"buildpack":"0.2","platform":"0.3"}}}`
		r, err := audit.Builder("b", syntheticImage(t, labels), "")
		Expect(err).NotTo(HaveOccurred())
		Expect(r.PlatformAPI).To(Equal("0.3"))
		Expect(r.Covered).To(BeTrue())
	})

	type bad struct {
		name     string
		labels   map[string]string
		expected string
	}
	valid := builderLabels("0.21.11", "0.15", initLast, "")
	with := func(label, value string) map[string]string {
		m := map[string]string{}
		for k, v := range valid {
			m[k] = v
		}
		if value == "" {
			delete(m, label)
		} else {
			m[label] = value
		}
		return m
	}
	for _, c := range []bad{
		{name: "an image that is not a builder", labels: map[string]string{"io.buildpacks.stack.id": "x"},
			expected: "not a builder: it has no label io.buildpacks.builder.metadata"},
		{name: "a builder without an order", labels: with("io.buildpacks.buildpack.order", ""),
			expected: "not a builder: it has no label io.buildpacks.buildpack.order"},
		{name: "unreadable metadata", labels: with("io.buildpacks.builder.metadata", "{not json"),
			expected: "unable to read label io.buildpacks.builder.metadata: "},
		{name: "an unreadable order", labels: with("io.buildpacks.buildpack.order", `{"group":1}`),
			expected: "unable to read label io.buildpacks.buildpack.order: "},
		{name: "an unreadable system label", labels: with("io.buildpacks.buildpack.system", `[1]`),
			expected: "unable to read label io.buildpacks.buildpack.system: "},
		{name: "no Platform API", labels: with("io.buildpacks.builder.metadata", `{"lifecycle":{"version":"1"}}`),
			expected: "the builder names no Platform API for its lifecycle (label io.buildpacks.builder.metadata, /cnb/lifecycle/lifecycle.toml)"},
		{name: "a bad Platform API", labels: with("io.buildpacks.builder.metadata", `{"lifecycle":{"apis":{"platform":{"supported":["0.x"]}}}}`),
			expected: `unable to read the lifecycle's Platform APIs: invalid API version "0.x": expected major.minor`},
	} {
		c := c
		it("rejects "+c.name+", naming what is wrong", func() {
			_, err := audit.Builder("b", syntheticImage(t, c.labels), "")
			Expect(err).To(MatchError(ContainSubstring(c.expected)))
		})
	}
}

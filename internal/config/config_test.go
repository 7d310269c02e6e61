package config_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"github.com/paketo-buildpacks/libpak/v2"
	"github.com/sclevine/spec"
	"github.com/sclevine/spec/report"

	"github.com/pid1-buildpacks/init/internal/config"
)

func TestUnit(t *testing.T) {
	suite := spec.New("config", spec.Report(report.Terminal{}))
	suite("Resolve", testResolve)
	suite.Run(t)
}

func testResolve(t *testing.T, context spec.G, it spec.S) {
	Expect := NewWithT(t).Expect

	resolver := libpak.ConfigurationResolver{Configurations: []libpak.BuildModuleConfiguration{
		{Name: config.Enabled, Default: "true", Build: true},
		{Name: config.ProcessTypes, Default: "*", Build: true},
	}}

	type valid struct {
		name     string
		env      map[string]string
		expected config.Config
	}
	for _, tc := range []valid{
		{name: "defaults", expected: config.Config{Enabled: true}},
		{name: "disabled", env: map[string]string{config.Enabled: "false"}, expected: config.Config{Enabled: false}},
		{name: "disabled, any case and spaces", env: map[string]string{config.Enabled: " FALSE "}, expected: config.Config{Enabled: false}},
		{name: "enabled explicitly", env: map[string]string{config.Enabled: "True"}, expected: config.Config{Enabled: true}},
		{name: "empty means the default", env: map[string]string{config.Enabled: "", config.ProcessTypes: ""}, expected: config.Config{Enabled: true}},
		{name: "one type", env: map[string]string{config.ProcessTypes: "web"}, expected: config.Config{Enabled: true, Types: []string{"web"}}},
		{name: "several types, spaces and duplicates", env: map[string]string{config.ProcessTypes: " web , worker,web,task.v2_x-y "},
			expected: config.Config{Enabled: true, Types: []string{"web", "worker", "task.v2_x-y"}}},
		{name: "every type", env: map[string]string{config.ProcessTypes: " * "}, expected: config.Config{Enabled: true}},
	} {
		tc := tc
		it("resolves "+tc.name, func() {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			c, err := config.Resolve(resolver)
			Expect(err).NotTo(HaveOccurred())
			Expect(c).To(Equal(tc.expected))
		})
	}

	type invalid struct {
		name     string
		env      map[string]string
		expected string
	}
	for _, tc := range []invalid{
		{name: "BP_INIT_ENABLED=maybe", env: map[string]string{config.Enabled: "maybe"}, expected: `invalid BP_INIT_ENABLED "maybe": expected true or false`},
		{name: "BP_INIT_ENABLED=1", env: map[string]string{config.Enabled: "1"}, expected: `invalid BP_INIT_ENABLED "1": expected true or false`},
		{name: "an empty entry in BP_INIT_PROCESS_TYPES", env: map[string]string{config.ProcessTypes: "web,,worker"},
			expected: `invalid BP_INIT_PROCESS_TYPES "web,,worker": expected "*" or a comma-separated list of process types`},
		{name: "a type with a space", env: map[string]string{config.ProcessTypes: "my web"},
			expected: `invalid BP_INIT_PROCESS_TYPES "my web": expected "*" or a comma-separated list`},
		{name: "a star among types", env: map[string]string{config.ProcessTypes: "web,*"},
			expected: `invalid BP_INIT_PROCESS_TYPES "web,*"`},
	} {
		tc := tc
		it("rejects "+tc.name+", naming the variable and the accepted values", func() {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			_, err := config.Resolve(resolver)
			Expect(err).To(MatchError(ContainSubstring(tc.expected)))
		})
	}

	it("selects every type by default and only the named ones otherwise", func() {
		Expect(config.Config{}.Selects("anything")).To(BeTrue())
		c := config.Config{Types: []string{"web", "worker"}}
		Expect(c.Selects("web")).To(BeTrue())
		Expect(c.Selects("worker")).To(BeTrue())
		Expect(c.Selects("task")).To(BeFalse())
	})
}

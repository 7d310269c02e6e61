package audit_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"

	"github.com/pid1-buildpacks/init/internal/audit"
)

func testMain(t *testing.T, context spec.G, it spec.S) {
	Expect := NewWithT(t).Expect

	const (
		covered    = `[{"group":[{"id":"samples/processes"},{"id":"pid1-buildpacks/init"}]}]`
		notCovered = `[{"group":[{"id":"samples/processes"}]}]`
	)
	var (
		daemon audit.Source
		host   string
	)
	// The daemon is a map; the registry is a real one, in memory, on a loopback port.
	it.Before(func() {
		images := map[string]v1.Image{
			"b/covered":     syntheticImage(t, builderLabels("0.21.11", "0.15", covered, "")),
			"b/not-covered": syntheticImage(t, builderLabels("0.21.11", "0.15", notCovered, "")),
			"b/system-post": syntheticImage(t, builderLabels("0.21.11", "0.15", notCovered,
				`{"post":{"buildpacks":[{"id":"pid1-buildpacks/init","version":"0.1.0"}]}}`)),
			"i/bare":        syntheticImage(t, map[string]string{"io.buildpacks.build.metadata": `{"processes":[{"type":"web","command":["app"],"direct":true}]}`}),
			"not/a-builder": syntheticImage(t, map[string]string{}),
		}
		daemon = func(ref string) (v1.Image, error) {
			if img, ok := images[ref]; ok {
				return img, nil
			}
			return nil, fmt.Errorf("unable to read image %s from the Docker daemon: no such image", ref)
		}
		server := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
		t.Cleanup(server.Close)
		host = strings.TrimPrefix(server.URL, "http://")
		for ref, img := range images {
			r, err := name.ParseReference(host + "/" + ref)
			Expect(err).NotTo(HaveOccurred())
			Expect(remote.Write(r, img)).To(Succeed())
		}
	})

	// run runs Main with args, HOST in them replaced by the registry's address.
	run := func(args ...string) (string, string, int) {
		for i := range args {
			args[i] = strings.ReplaceAll(args[i], "HOST", host)
		}
		var stdout, stderr bytes.Buffer
		code := audit.Main(args, daemon, audit.Registry, &stdout, &stderr)
		return stdout.String(), strings.ReplaceAll(stderr.String(), host, "HOST"), code
	}

	type tc struct {
		args   []string
		code   int
		stdout string
		stderr string
	}
	for _, c := range []tc{
		{args: []string{"builder", "b/covered"}, code: 0,
			stdout: "b/covered: covered: on Platform API 0.7 to 0.15 of lifecycle 0.21.11: pid1-buildpacks/init is the last buildpack of every order group (1); app developers can opt out with BP_INIT_ENABLED=false\n"},
		{args: []string{"builder", "b/not-covered"}, code: 1,
			stdout: "b/not-covered: order group 1 (samples/processes): pid1-buildpacks/init is not in it\n"},
		{args: []string{"builder", "--platform-api", "0.9", "b/system-post"}, code: 1,
			stdout: "b/system-post: [system.post] is ignored below Platform API 0.15: kpack, Tekton, pack < 0.40; list pid1-buildpacks/init last in every order group too\n" +
				"b/system-post: Platform API 0.9: order group 1 (samples/processes): pid1-buildpacks/init is not in it\n"},
		{args: []string{"builder", "--platform-api", "0.9", "b/covered"}, code: 0,
			stdout: "b/covered: covered: on Platform API 0.9 of lifecycle 0.21.11: pid1-buildpacks/init is the last buildpack of every order group (1); app developers can opt out with BP_INIT_ENABLED=false\n"},
		{args: []string{"builder", "--platform-api", "0.6", "b/covered"}, code: 2,
			stderr: "audit builder: b/covered: lifecycle 0.21.11 does not support Platform API 0.6: it supports 0.7, 0.8, 0.9, 0.10, 0.11, 0.12, 0.13, 0.14, 0.15\n"},
		{args: []string{"image", "--platform-api", "0.9", "i/bare"}, code: 2,
			stderr: "audit image: --platform-api is for audit builder\n"},
		{args: []string{"image", "i/bare"}, code: 1, stdout: "i/bare: process type web starts app, not an init\n"},
		{args: []string{"builder", "i/bare"}, code: 2,
			stderr: "audit builder: i/bare: not a builder: it has no label io.buildpacks.builder.metadata\n"},
		{args: []string{"image", "not/a-builder"}, code: 2,
			stderr: "audit image: not/a-builder: not an app image built with buildpacks: it has no label io.buildpacks.build.metadata\n"},
		{args: []string{"builder", "no/such"}, code: 2,
			stderr: "audit builder: unable to read image no/such from the Docker daemon: no such image\n"},
		{args: []string{"builder", "--registry", "HOST/b/covered"}, code: 0,
			stdout: "HOST/b/covered: covered: on Platform API 0.7 to 0.15 of lifecycle 0.21.11: pid1-buildpacks/init is the last buildpack of every order group (1); app developers can opt out with BP_INIT_ENABLED=false\n"},
		{args: []string{"image", "--registry", "HOST/i/bare"}, code: 1,
			stdout: "HOST/i/bare: process type web starts app, not an init\n"},
	} {
		c := c
		it(fmt.Sprintf("exits %d for %s", c.code, strings.Join(c.args, " ")), func() {
			stdout, stderr, code := run(append([]string{}, c.args...)...)
			Expect(code).To(Equal(c.code), stdout+stderr)
			Expect(strings.ReplaceAll(stdout, host, "HOST")).To(Equal(c.stdout))
			Expect(stderr).To(Equal(c.stderr))
		})
	}

	it("exits 2 with one clear line for an image its registry does not have", func() {
		_, stderr, code := run("builder", "--registry", "HOST/no/such:tag")
		Expect(code).To(Equal(2))
		Expect(stderr).To(HavePrefix("audit builder: unable to read image HOST/no/such:tag from its registry: "))
		Expect(strings.Count(stderr, "\n")).To(Equal(1), stderr)
	})

	type usage struct {
		name     string
		args     []string
		expected string
	}
	for _, c := range []usage{
		{name: "no command", args: nil, expected: "audit: missing command: want builder or image"},
		{name: "an unknown command", args: []string{"stack", "x"}, expected: `audit: unknown command "stack": want builder or image`},
		{name: "no reference", args: []string{"builder"}, expected: "audit builder: want exactly one image reference, got 0 arguments"},
		{name: "two references", args: []string{"image", "a", "b"}, expected: "audit image: want exactly one image reference, got 2 arguments"},
		{name: "an unknown flag", args: []string{"image", "--yaml", "a"}, expected: "audit image: flag provided but not defined: -yaml"},
		{name: "an invalid reference", args: []string{"image", "--registry", "UPPER/Case::x"}, expected: `audit image: invalid image reference "UPPER/Case::x"`},
	} {
		c := c
		it("exits 2 with usage on "+c.name, func() {
			stdout, stderr, code := run(append([]string{}, c.args...)...)
			Expect(code).To(Equal(2))
			Expect(stdout).To(BeEmpty())
			Expect(stderr).To(HavePrefix(c.expected))
		})
	}

	it("writes the report as JSON with --json, and an error as JSON on bad input", func() {
		stdout, _, code := run("builder", "--json", "b/not-covered")
		Expect(code).To(Equal(1))
		var r audit.Report
		Expect(json.Unmarshal([]byte(stdout), &r)).To(Succeed())
		Expect(r.Kind).To(Equal("builder"))
		Expect(r.Covered).To(BeFalse())
		Expect(r.Problems).To(Equal([]string{"order group 1 (samples/processes): pid1-buildpacks/init is not in it"}))
		Expect(r.Groups).To(HaveLen(1))

		stdout, _, code = run("image", "--json", "i/bare")
		Expect(code).To(Equal(1))
		Expect(json.Unmarshal([]byte(stdout), &r)).To(Succeed())
		Expect(r.Processes).To(Equal([]audit.ProcessReport{{Type: "web", Command: "app"}}))

		stdout, _, code = run("builder", "--json", "b/system-post")
		Expect(code).To(Equal(1))
		r = audit.Report{}
		Expect(json.Unmarshal([]byte(stdout), &r)).To(Succeed())
		verdicts := map[string]bool{}
		for _, p := range r.Platforms {
			verdicts[p.PlatformAPI] = p.Covered
		}
		Expect(verdicts).To(Equal(map[string]bool{"0.7": false, "0.8": false, "0.9": false, "0.10": false, "0.11": false,
			"0.12": false, "0.13": false, "0.14": false, "0.15": true}))

		stdout, _, code = run("builder", "--json", "b/covered")
		Expect(code).To(Equal(0))
		Expect(stdout).To(ContainSubstring(`"problems": []`))

		stdout, _, code = run("builder", "--json", "no/such")
		Expect(code).To(Equal(2))
		var e map[string]string
		Expect(json.Unmarshal([]byte(stdout), &e)).To(Succeed())
		Expect(e).To(Equal(map[string]string{"kind": "builder", "ref": "no/such", "error": "unable to read image no/such from the Docker daemon: no such image"}))
	})
}

package integration_test

import (
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

// builderEverywhere is examples/builder-everywhere.toml: the init last in every group and in
// [system.post], lifecycle 0.21.11 (scripts/builders.sh everywhere).
const builderEverywhere = "pid1-buildpacks/builder:everywhere"

// platformAPIs are the Platform APIs the lifecycle is driven at as the platforms drive it: 0.9
// (kpack v0.17's newest, Tekton's buildpacks task 0.7), 0.11 (a later Tekton task) and 0.15,
// lifecycle 0.21.11's newest.
var platformAPIs = []string{"0.9", "0.11", "0.15"}

// platformBuild is one build of the sample app by a platform that runs the builder image's
// lifecycle itself and exports to the local registry.
type platformBuild struct {
	// Mode is "creator" (Tekton's buildpacks task) or "phases" (kpack's build pod).
	Mode, PlatformAPI, Builder string
	// Image is the registry repository exported to, HOST:PORT/platforms-...
	Image string
	// Cache is the cache: a volume mounted at /cache for phases, a registry repository for
	// creator.
	Cache string
	// Again marks a later build of the same image, which keeps what the earlier one left in the
	// registry and the cache; a first build starts from an empty repository and cache.
	Again bool
}

// platformRepository is the local registry's repository HOST:PORT/platforms-NAME.
func platformRepository(name string) string {
	return registryAddr() + "/platforms-" + name
}

// freshRepository deletes every tag of repository (HOST:PORT/REPO[:TAG]) from the local
// registry, now and when the test ends: a build must not find a previous image of an earlier
// run.
func freshRepository(t *testing.T, repository string) string {
	t.Helper()
	deleteRepository(t, repository)
	t.Cleanup(func() { deleteRepository(t, repository) })
	return repository
}

func deleteRepository(t *testing.T, repository string) {
	t.Helper()
	repo := repositoryPath(strings.SplitN(repository, "@", 2)[0])
	if i := strings.LastIndex(repo, ":"); i > 0 {
		repo = repo[:i]
	}
	client := http.Client{Timeout: time.Minute}
	resp, err := client.Get("http://" + registryAddr() + "/v2/" + repo + "/tags/list")
	if err != nil {
		t.Fatalf("unable to list the tags of %s: %v", repo, err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return
	}
	for _, tag := range registryTags(t, registryAddr()+"/"+repo) {
		req, _ := http.NewRequest(http.MethodDelete, "http://"+registryAddr()+"/v2/"+repo+"/manifests/"+registryDigest(t, registryAddr()+"/"+repo, tag), nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("unable to delete %s:%s: %v", repo, tag, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusNotFound {
			t.Fatalf("DELETE %s:%s: %s", repo, tag, resp.Status)
		}
	}
}

// platformRunImage is the run image as the registry serves it, pushed there once: platforms
// that export to a registry read the run image from it.
func platformRunImage(t *testing.T) string {
	t.Helper()
	image := freshRepository(t, platformRepository("run-busybox:latest"))
	docker(t, "tag", "pid1-buildpacks/run:busybox", image)
	docker(t, "push", "-q", image)
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", image).Run() })
	return image
}

// newRunImage makes a run image with one more layer than the busybox one (a file
// /etc/platforms-run-v2), pushes it to the registry and returns its reference: what a rebase
// moves the app onto.
func newRunImage(t *testing.T) string {
	t.Helper()
	image := freshRepository(t, platformRepository("run-v2:latest"))
	name := "platforms-run-v2-" + fmt.Sprint(time.Now().UnixNano())
	docker(t, "run", "--name", name, "--user", "0", "--entrypoint", "sh", "pid1-buildpacks/run:busybox", "-c", "echo v2 > /etc/platforms-run-v2")
	defer func() { _ = exec.Command("docker", "rm", "-f", name).Run() }()
	docker(t, "commit", "--change", "USER 1000:1000", name, image)
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", image).Run() })
	docker(t, "push", "-q", image)
	return image
}

// builderUser is the CNB_USER_ID:CNB_GROUP_ID of a builder image, the user kpack's build pod and
// Tekton's step run the lifecycle as.
func builderUser(t *testing.T, builder string) (string, string) {
	t.Helper()
	env := docker(t, "image", "inspect", "--format", `{{range .Config.Env}}{{println .}}{{end}}`, builder)
	uid := regexp.MustCompile(`(?m)^CNB_USER_ID=(\d+)$`).FindStringSubmatch(env)
	gid := regexp.MustCompile(`(?m)^CNB_GROUP_ID=(\d+)$`).FindStringSubmatch(env)
	if uid == nil || gid == nil {
		t.Fatalf("%s has no CNB_USER_ID or CNB_GROUP_ID in its environment:\n%s", builder, env)
	}
	return uid[1], gid[1]
}

// volumes creates a docker volume named platforms-PREFIX-ROLE for each role, removed when the
// test ends, and returns the names by role.
func volumes(t *testing.T, prefix string, roles ...string) map[string]string {
	t.Helper()
	names := map[string]string{}
	for _, role := range roles {
		name := "platforms-" + prefix + "-" + role
		_ = exec.Command("docker", "volume", "rm", "-f", name).Run()
		docker(t, "volume", "create", name)
		t.Cleanup(func() { _ = exec.Command("docker", "volume", "rm", "-f", name).Run() })
		names[role] = name
	}
	return names
}

// lifecycle runs a lifecycle binary of builder in a container of its own, on the host network
// (the registry listens on the loopback), as user with env and the volume mounts (NAME:PATH);
// it returns the result whatever the exit code.
func lifecycle(t *testing.T, builder, user string, env, mounts []string, binary string, args ...string) result {
	t.Helper()
	cmd := []string{"run", "--rm", "--network", "host", "--user", user}
	for _, e := range env {
		cmd = append(cmd, "-e", e)
	}
	for _, m := range mounts {
		cmd = append(cmd, "-v", m)
	}
	cmd = append(cmd, "--entrypoint", "/cnb/lifecycle/"+binary, builder)
	return runDocker(t, append(cmd, args...)...)
}

// runDocker runs the docker client and returns the result whatever the exit code.
func runDocker(t *testing.T, args ...string) result {
	t.Helper()
	return run(t, 5*time.Minute, nil, "docker", args...)
}

// prepare does what kpack's build-init and Tekton's prepare step do before the lifecycle: as
// root, it copies the app into the workspace volume and gives the volumes to the builder's
// user.
func prepare(t *testing.T, builder string, vols map[string]string, paths map[string]string) {
	t.Helper()
	uid, gid := builderUser(t, builder)
	args := []string{"run", "--rm", "--user", "0", "-v", settings.App + ":/src:ro"}
	var dirs []string
	for role, name := range vols {
		args = append(args, "-v", name+":"+paths[role])
		dirs = append(dirs, paths[role])
	}
	args = append(args, "--entrypoint", "sh", builder, "-c",
		"cp -a /src/. /workspace/ && chown -R "+uid+":"+gid+" "+strings.Join(dirs, " "))
	docker(t, args...)
}

// build runs the lifecycle of b.Builder as b.Mode does and returns the lifecycle's output; the
// build must pass. The image is then pulled from the registry into the daemon (and removed from
// it when the test ends).
func (b platformBuild) build(t *testing.T, runImage string) string {
	t.Helper()
	if !b.Again {
		freshRepository(t, b.Image)
		if b.Mode == "creator" {
			freshRepository(t, b.Cache)
		}
	}
	uid, gid := builderUser(t, b.Builder)
	user := uid + ":" + gid
	api := "CNB_PLATFORM_API=" + b.PlatformAPI
	tag := strings.NewReplacer(".", "", "/", "-", ":", "-").Replace(b.Mode + "-" + b.PlatformAPI)
	paths := map[string]string{"layers": "/layers", "workspace": "/workspace", "home": "/builder/home", "platform": "/platform", "cache": "/cache"}
	var output strings.Builder
	step := func(r result, what string) {
		t.Helper()
		output.WriteString(r.Output)
		if r.ExitCode != 0 {
			t.Fatalf("%s %s at Platform API %s: %s: exit %d\n%s", b.Mode, b.Image, b.PlatformAPI, what, r.ExitCode, output.String())
		}
	}
	switch b.Mode {
	case "creator":
		// Tekton's buildpacks task: a prepare step as root, then one step running creator as
		// the builder's user with the task's arguments.
		vols := volumes(t, tag, "layers", "workspace", "platform")
		prepare(t, b.Builder, vols, paths)
		mounts := []string{vols["layers"] + ":/layers", vols["workspace"] + ":/workspace", vols["platform"] + ":/platform"}
		step(lifecycle(t, b.Builder, user, []string{api}, mounts, "creator",
			"-app=/workspace", "-cache-image="+b.Cache, "-uid="+uid, "-gid="+gid,
			"-layers=/layers", "-platform=/platform", "-report=/layers/report.toml", "-process-type=web",
			"-skip-restore=false", "-previous-image="+b.Image, "-run-image="+runImage, b.Image), "creator")
	case "phases":
		// kpack's build pod: each phase in its own container of the builder image, sharing the
		// layers, workspace, home and platform volumes of the pod and the cache volume (b.Cache)
		// that outlives it.
		vols := volumes(t, tag, "layers", "workspace", "home", "platform")
		vols["cache"] = b.Cache
		prepare(t, b.Builder, vols, paths)
		mount := func(roles ...string) []string {
			var m []string
			for _, r := range roles {
				m = append(m, vols[r]+":"+paths[r])
			}
			return m
		}
		home := "HOME=/builder/home"
		step(lifecycle(t, b.Builder, user, []string{home, api}, mount("layers", "workspace", "home"), "analyzer",
			"-layers=/layers", "-analyzed=/layers/analyzed.toml", "-run-image="+runImage, "-previous-image="+b.Image, b.Image), "analyzer")
		step(lifecycle(t, b.Builder, user, []string{api}, mount("layers", "platform", "workspace"), "detector",
			"-app=/workspace", "-group=/layers/group.toml", "-plan=/layers/plan.toml"), "detector")
		step(lifecycle(t, b.Builder, user, []string{home, api}, mount("layers", "home", "cache"), "restorer",
			"-group=/layers/group.toml", "-layers=/layers", "-cache-dir=/cache", "-analyzed=/layers/analyzed.toml"), "restorer")
		step(lifecycle(t, b.Builder, user, []string{api}, mount("layers", "platform", "workspace"), "builder",
			"-layers=/layers", "-app=/workspace", "-group=/layers/group.toml", "-plan=/layers/plan.toml"), "builder")
		step(lifecycle(t, b.Builder, user, []string{home, api, "CNB_RUN_IMAGE=" + runImage}, mount("layers", "workspace", "home", "cache"), "exporter",
			"-layers=/layers", "-app=/workspace", "-group=/layers/group.toml", "-analyzed=/layers/analyzed.toml",
			"-project-metadata=/layers/project-metadata.toml", "-cache-dir=/cache", "-report=/layers/report.toml", b.Image), "exporter")
	default:
		t.Fatalf("unknown platform mode %q", b.Mode)
	}
	pullBack(t, b.Image)
	return output.String()
}

// bothModes are the first builds of the sample app with builder at Platform API api by creator
// (a cache image) and by the phases (a cache volume), into repositories named after name.
func bothModes(t *testing.T, builder, api, name string) []platformBuild {
	t.Helper()
	apiTag := strings.ReplaceAll(api, ".", "")
	return []platformBuild{
		{Mode: "creator", PlatformAPI: api, Builder: builder,
			Image: platformRepository(name + "-creator-" + apiTag), Cache: platformRepository(name + "-cache-creator-" + apiTag)},
		{Mode: "phases", PlatformAPI: api, Builder: builder,
			Image: platformRepository(name + "-phases-" + apiTag), Cache: volumes(t, name+"-phases-"+apiTag, "cache")["cache"]},
	}
}

// pullBack pulls image from the registry into the daemon, replacing any older copy, and removes
// it from the daemon when the test ends.
func pullBack(t *testing.T, image string) {
	t.Helper()
	old, _ := exec.Command("docker", "image", "inspect", "--format", "{{.Id}}", image).Output()
	docker(t, "pull", "-q", image)
	if id := strings.TrimSpace(string(old)); id != "" && id != docker(t, "image", "inspect", "--format", "{{.Id}}", image) {
		_ = exec.Command("docker", "rmi", id).Run()
	}
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", image).Run() })
}

// behaviour is what a container of an app image does, as far as it is the same with and without
// the init: the sample app's output for each way of starting it, its exit codes, how it stops,
// and the image's entrypoint, command and working directory. A program that kills itself is
// not among them: as PID 1 it cannot (the kernel ignores a signal PID 1 has no handler for,
// even its own SIGKILL), under the init it can.
type behaviour struct {
	Entrypoint, Cmd, WorkingDir, DefaultType string
	Echo, EchoUserArgs, Serve, ServeUserArgs string
	Exit, ExitUserArgs, Stop                 int
}

var (
	// serveStart is the line the sample app's serve mode starts with.
	serveStart = regexp.MustCompile(`serve: .*cwd=\S+`)
	// pidFields are the sample app's pid and ppid, which the init changes by being PID 1.
	pidFields = regexp.MustCompile(`pid=\d+ ppid=\d+ `)
)

func observe(t *testing.T, image string) behaviour {
	t.Helper()
	var b behaviour
	inspect := func(format string) string { return docker(t, "image", "inspect", "--format", format, image) }
	b.Entrypoint, b.Cmd, b.WorkingDir = inspect("{{json .Config.Entrypoint}}"), inspect("{{json .Config.Cmd}}"), inspect("{{.Config.WorkingDir}}")
	b.DefaultType = imageBuildMetadata(t, image).DefaultProcess
	b.Echo = strings.TrimSpace(dockerRun(t, "--entrypoint", "echo", image).Stdout)
	b.EchoUserArgs = strings.TrimSpace(dockerRun(t, "--entrypoint", "echo", image, "user", "an arg").Stdout)
	b.Exit = dockerRun(t, "--entrypoint", "exit", image).ExitCode
	b.ExitUserArgs = dockerRun(t, "--entrypoint", "exit", image, "42").ExitCode
	serveLine := func(args ...string) (string, string) {
		id := startContainer(t, append([]string{image}, args...)...)
		log := waitForLog(t, id, serveStart, 30*time.Second)
		return pidFields.ReplaceAllString(serveStart.FindString(log), ""), id
	}
	var id string
	b.Serve, id = serveLine()
	stop := run(t, time.Minute, nil, "docker", "stop", "-t", "10", id)
	Expect := NewWithT(t).Expect
	Expect(stop.ExitCode).To(Equal(0), stop.Output)
	Expect(stop.Duration.Seconds()).To(BeNumerically("<", 5), "docker stop of %s", image)
	b.Stop = atoi(t, docker(t, "inspect", "--format", "{{.State.ExitCode}}", id))
	b.ServeUserArgs, _ = serveLine("user-arg")
	return b
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}

// expectWrappedOnce checks that every type of image starts through the init, that the init
// buildpack ran once and last, and that the default process runs with the init as PID 1.
func expectWrappedOnce(t *testing.T, image, output string) {
	t.Helper()
	Expect := NewWithT(t).Expect
	expectEveryTypeWrapped(t, image, output)
	ids := buildpackIDs(t, image)
	count := 0
	for _, id := range ids {
		if id == initBuildpackID {
			count++
		}
	}
	Expect(count).To(Equal(1), "the init ran once: %v", ids)
	Expect(pid1Cmdline(t, image)).To(HavePrefix(initPath + " -- /workspace/bin/sample-app serve"))
}

// testPlatforms drives the builder image's own lifecycle as Tekton (creator) and kpack (the
// phases one by one) do, at Platform API 0.9, 0.11 and 0.15, exporting to the local registry
// (issue 13, item 1).
func testPlatforms(t *testing.T, context spec.G, it spec.S) {
	var Expect = NewWithT(t).Expect

	for _, api := range platformAPIs {
		api := api
		it("wraps every type at Platform API "+api+" with creator and with the phases, behaving as the build without the init", func() {
			runImage := platformRunImage(t)
			apiTag := strings.ReplaceAll(api, ".", "")
			without := platformBuild{Mode: "creator", PlatformAPI: api, Builder: builderWithout,
				Image: platformRepository("app-without-" + apiTag), Cache: platformRepository("cache-without-" + apiTag)}
			without.build(t, runImage)
			expected := observe(t, without.Image)
			t.Logf("without the init at Platform API %s: %+v", api, expected)
			Expect(pid1Cmdline(t, without.Image)).To(HavePrefix("/workspace/bin/sample-app serve"))

			for _, b := range bothModes(t, builderEverywhere, api, "app") {
				output := b.build(t, runImage)
				expectWrappedOnce(t, b.Image, output)
				Expect(processesByType(t, b.Image)).To(HaveLen(len(processesByType(t, without.Image))))
				Expect(observe(t, b.Image)).To(Equal(expected), "%s at Platform API %s", b.Mode, api)
				Expect(dockerRun(t, "--entrypoint", "kill", b.Image).ExitCode).To(Equal(128+9), "kill 9 under the init")
				Expect(output).To(ContainSubstring("Adding layer '" + initBuildpackID + ":init'"))

				// A second build, as the platform's next build of the same image.
				first := initLayerSHA(t, b.Image)
				b.Again = true
				again := b.build(t, runImage)
				Expect(again).To(ContainSubstring("Reusing layer '"+initBuildpackID+":init'"), "%s at %s", b.Mode, api)
				Expect(initLayerSHA(t, b.Image)).To(Equal(first))
			}
		})
	}

	// What the builder that enforces everywhere adds the order for: the [system.post]-only builder
	// (examples/builder.toml) driven the same ways wraps at 0.15 only.
	it("leaves every type of the [system.post]-only builder unwrapped below Platform API 0.15 with creator and with the phases, and wraps at 0.15", func() {
		runImage := platformRunImage(t)
		for _, api := range platformAPIs {
			for _, b := range bothModes(t, builderSystem, api, "app-system") {
				output := b.build(t, runImage)
				if api == "0.15" {
					expectWrappedOnce(t, b.Image, output)
					continue
				}
				Expect(buildpackIDs(t, b.Image)).To(Equal([]string{"samples/legacy", "samples/processes"}), "%s at Platform API %s ignores [system.post]", b.Mode, api)
				types := processesByType(t, b.Image)
				Expect(types).NotTo(BeEmpty())
				for typ, p := range types {
					Expect(p.Command[0]).NotTo(Equal(initPath), "%s of %s at Platform API %s", typ, b.Mode, api)
				}
			}
		}
	})

	it("keeps every type wrapped when the lifecycle's rebaser or pack rebase moves the image to a new run image", func() {
		runImage, newRun := platformRunImage(t), newRunImage(t)
		newRunTop := docker(t, "image", "inspect", "--format", "{{json .RootFS.Layers}}", newRun)
		for _, c := range []struct {
			api, how string
		}{{"0.9", "rebaser"}, {"0.15", "rebaser"}, {"0.11", "pack rebase"}} {
			b := platformBuild{Mode: "creator", PlatformAPI: c.api, Builder: builderEverywhere,
				Image: platformRepository("app-rebase-" + strings.ReplaceAll(c.api, ".", "")), Cache: platformRepository("cache-rebase")}
			b.build(t, runImage)
			before := processesByType(t, b.Image)
			var r result
			if c.how == "rebaser" {
				uid, gid := builderUser(t, b.Builder)
				args := []string{"-run-image=" + newRun}
				if c.api != "0.9" {
					args = append(args, "-force")
				}
				r = lifecycle(t, b.Builder, uid+":"+gid, []string{"CNB_PLATFORM_API=" + c.api}, nil, "rebaser", append(args, b.Image)...)
			} else {
				r = run(t, 5*time.Minute, nil, settings.Pack, "rebase", b.Image, "--run-image", newRun, "--publish", "--force")
			}
			Expect(r.ExitCode).To(Equal(0), "%s at Platform API %s\n%s", c.how, c.api, r.Output)
			pullBack(t, b.Image)
			layers := docker(t, "image", "inspect", "--format", "{{json .RootFS.Layers}}", b.Image)
			Expect(layers).To(HavePrefix(strings.TrimSuffix(newRunTop, "]")), "%s: the image sits on the new run image", c.how)
			Expect(processesByType(t, b.Image)).To(Equal(before), c.how)
			expectWrappedOnce(t, b.Image, r.Output)
		}
	})
}

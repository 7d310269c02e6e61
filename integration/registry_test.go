package integration_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/sclevine/spec"
)

// registryAddr is the local registry's HOST:PORT (scripts/registry.sh, .tools/env).
func registryAddr() string {
	if addr := os.Getenv("PID1_REGISTRY"); addr != "" {
		return addr
	}
	return "127.0.0.1:5311"
}

// registryAnswers reports why the registry's /v2/ does not answer 200, or nil.
func registryAnswers() error {
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + registryAddr() + "/v2/")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /v2/: %s", resp.Status)
	}
	return nil
}

// Media types the registry API is asked for.
const (
	ociIndex    = "application/vnd.oci.image.index.v1+json"
	ociManifest = "application/vnd.oci.image.manifest.v1+json"
)

// registryGet GETs path of the local registry's API (/v2/...) and fails the test unless it
// answers 200. It returns the body and the Docker-Content-Digest header.
func registryGet(t *testing.T, path, accept string) ([]byte, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+registryAddr()+path, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	client := http.Client{Timeout: time.Minute}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: unable to read the body: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", path, resp.Status, body)
	}
	return body, resp.Header.Get("Docker-Content-Digest")
}

// repositoryPath is REPO of HOST:PORT/REPO.
func repositoryPath(repository string) string {
	return strings.TrimPrefix(repository, registryAddr()+"/")
}

// registryTags lists the tags of repository (HOST:PORT/REPO), sorted by the registry.
func registryTags(t *testing.T, repository string) []string {
	t.Helper()
	body, _ := registryGet(t, "/v2/"+repositoryPath(repository)+"/tags/list", "")
	var list struct {
		Tags []string `json:"tags"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatalf("tags of %s: %v\n%s", repository, err, body)
	}
	return list.Tags
}

// registryDigest is the digest the registry serves for repository:tag.
func registryDigest(t *testing.T, repository, tag string) string {
	t.Helper()
	_, digest := registryGet(t, "/v2/"+repositoryPath(repository)+"/manifests/"+tag, ociIndex+", "+ociManifest+", application/vnd.docker.distribution.manifest.v2+json")
	return digest
}

// platformContent is what one platform's image of a published index holds, as read from the
// registry with its HTTP API: the ELF machine of each buildpack executable and the
// architectures its buildpack.toml declares.
type platformContent struct {
	Platform      string
	Digest        string
	Machines      map[string]elf.Machine // by path in the layer
	DeclaredArchs []string
}

// publishedPlatforms reads the index repository@reference and each platform's image layers.
func publishedPlatforms(t *testing.T, repository, reference string) []platformContent {
	t.Helper()
	repo := repositoryPath(repository)
	body, _ := registryGet(t, "/v2/"+repo+"/manifests/"+reference, ociIndex)
	var index struct {
		MediaType string `json:"mediaType"`
		Manifests []struct {
			Digest   string `json:"digest"`
			Platform struct {
				OS           string `json:"os"`
				Architecture string `json:"architecture"`
			} `json:"platform"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(body, &index); err != nil || index.MediaType != ociIndex {
		t.Fatalf("%s@%s is not an OCI image index (%v):\n%s", repository, reference, err, body)
	}
	var contents []platformContent
	for _, m := range index.Manifests {
		c := platformContent{Platform: m.Platform.OS + "/" + m.Platform.Architecture, Digest: m.Digest, Machines: map[string]elf.Machine{}}
		body, _ := registryGet(t, "/v2/"+repo+"/manifests/"+m.Digest, ociManifest)
		var manifest struct {
			Layers []struct {
				Digest string `json:"digest"`
			} `json:"layers"`
		}
		if err := json.Unmarshal(body, &manifest); err != nil {
			t.Fatalf("manifest %s: %v\n%s", m.Digest, err, body)
		}
		for _, l := range manifest.Layers {
			blob, _ := registryGet(t, "/v2/"+repo+"/blobs/"+l.Digest, "")
			readLayer(t, blob, &c)
		}
		contents = append(contents, c)
	}
	return contents
}

var (
	executablePath = regexp.MustCompile(`^/?cnb/buildpacks/[^/]+/[^/]+/bin/(build|detect|init)$`)
	declaredArch   = regexp.MustCompile(`(?m)^\s*arch\s*=\s*"([^"]+)"`)
)

// readLayer records the buildpack executables' ELF machines and buildpack.toml's declared
// architectures found in a gzipped layer.
func readLayer(t *testing.T, blob []byte, c *platformContent) {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(blob))
	if err != nil {
		t.Fatalf("layer of %s: %v", c.Platform, err)
	}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("layer of %s: %v", c.Platform, err)
		}
		content, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("layer of %s: %s: %v", c.Platform, hdr.Name, err)
		}
		switch {
		case executablePath.MatchString(hdr.Name):
			f, err := elf.NewFile(bytes.NewReader(content))
			if err != nil {
				t.Fatalf("%s in the %s image is not an ELF file: %v", hdr.Name, c.Platform, err)
			}
			c.Machines[hdr.Name] = f.Machine
		case strings.HasSuffix(hdr.Name, "/buildpack.toml"):
			for _, m := range declaredArch.FindAllStringSubmatch(string(content), -1) {
				c.DeclaredArchs = append(c.DeclaredArchs, m[1])
			}
		}
	}
}

// freeAddr returns a loopback address with a port nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// testRegistryScript checks scripts/registry.sh on addresses of its own, away from the local
// registry the other tests use.
func testRegistryScript(t *testing.T, context spec.G, it spec.S) {
	var (
		Expect     = NewWithT(t).Expect
		Eventually = NewWithT(t).Eventually
	)

	script := func(addr, state, command string) result {
		env := []string{"PID1_REGISTRY=" + addr, "PID1_REGISTRY_STATE=" + state, "PID1_REGISTRY_LOG=" + filepath.Join(state, "log")}
		return run(t, time.Minute, env, filepath.Join(settings.Root, "scripts", "registry.sh"), command)
	}

	it("starts a registry that answers on the loopback address, and stops it by the pid it recorded", func() {
		addr, state := freeAddr(t), t.TempDir()
		start := script(addr, state, "start")
		t.Cleanup(func() { script(addr, state, "stop") })
		Expect(start.ExitCode).To(Equal(0), start.Output)
		Expect(script(addr, state, "status").ExitCode).To(Equal(0))
		config, err := os.ReadFile(filepath.Join(state, "config.yml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(config)).To(ContainSubstring("addr: " + addr))
		Expect(string(config)).To(ContainSubstring("rootdirectory: " + filepath.Join(state, "data")))

		stop := script(addr, state, "stop")
		Expect(stop.ExitCode).To(Equal(0), stop.Output)
		status := script(addr, state, "status")
		Expect(status.ExitCode).To(Equal(1))
		Expect(status.Output).To(ContainSubstring("no registry answers on http://" + addr + "/v2/"))
	})

	it("does not stop a registry it did not start", func() {
		addr, state := freeAddr(t), t.TempDir()
		config := filepath.Join(state, "other.yml")
		Expect(os.WriteFile(config, []byte("version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: "+state+"/other\nhttp:\n  addr: "+addr+"\n"), 0o644)).To(Succeed())
		other := exec.Command("docker-registry", "serve", config)
		Expect(other.Start()).To(Succeed())
		t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
		Eventually(func() error { _, err := http.Get("http://" + addr + "/v2/"); return err }, 10*time.Second, 100*time.Millisecond).Should(Succeed())

		stop := script(addr, state, "stop")
		t.Logf("scripts/registry.sh stop: exit %d: %s", stop.ExitCode, strings.TrimSpace(stop.Output))
		Expect(stop.ExitCode).To(Equal(1))
		Expect(stop.Output).To(ContainSubstring("was not started by scripts/registry.sh"))
		Expect(other.Process.Signal(syscall.Signal(0))).To(Succeed(), "the other registry still runs")
	})

	it("refuses an address off the loopback", func() {
		r := script("0.0.0.0:5311", t.TempDir(), "start")
		Expect(r.ExitCode).To(Equal(1))
		Expect(r.Output).To(ContainSubstring("PID1_REGISTRY=0.0.0.0:5311: expected 127.x.x.x:PORT or localhost:PORT"))
	})
}

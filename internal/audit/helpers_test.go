package audit_test

import (
	"archive/tar"
	"bytes"
	"io"
	"sort"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// syntheticImage is an empty image whose configuration carries labels and env; an app image
// (with the label io.buildpacks.build.metadata) has the launcher as its entrypoint, as the
// lifecycle's exporter makes it.
func syntheticImage(t *testing.T, labels map[string]string, env ...string) v1.Image {
	t.Helper()
	config := v1.Config{Labels: labels, Env: env}
	if _, ok := labels["io.buildpacks.build.metadata"]; ok {
		config.Entrypoint = []string{"/cnb/lifecycle/launcher"}
	}
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		OS:           "linux",
		Architecture: "amd64",
		Config:       config,
	})
	if err != nil {
		t.Fatalf("unable to make a synthetic image: %v", err)
	}
	return img
}

// builderLabels are a builder's labels: a lifecycle supporting Platform APIs 0.7 up to
// platform, the order and, when not empty, the system buildpacks, as JSON.
func builderLabels(lifecycle, platform, order, system string) map[string]string {
	apis := `"0.7"`
	for _, v := range []string{"0.8", "0.9", "0.10", "0.11", "0.12", "0.13", "0.14", "0.15"} {
		apis += `, "` + v + `"`
		if v == platform {
			break
		}
	}
	labels := map[string]string{
		"io.buildpacks.builder.metadata": `{"description":"test","buildpacks":[{"id":"pid1-buildpacks/init","version":"0.1.0"}],` +
			`"lifecycle":{"version":"` + lifecycle + `","api":{"buildpack":"0.7","platform":"0.7"},` +
			`"apis":{"buildpack":{"deprecated":[],"supported":["0.7","0.10"]},"platform":{"deprecated":[],"supported":[` + apis + `]}}}}`,
		"io.buildpacks.buildpack.order": order,
	}
	if system != "" {
		labels["io.buildpacks.buildpack.system"] = system
	}
	return labels
}

// withLayers appends to img one layer per map of file paths to contents; a content "->TARGET"
// makes a symbolic link to TARGET.
func withLayers(t *testing.T, img v1.Image, layers ...map[string]string) v1.Image {
	t.Helper()
	for _, files := range layers {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		names := make([]string, 0, len(files))
		for name := range files {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			content := files[name]
			hdr := &tar.Header{Name: name, Mode: 0644, Typeflag: tar.TypeReg, Size: int64(len(content))}
			if target, ok := strings.CutPrefix(content, "->"); ok {
				hdr = &tar.Header{Name: name, Mode: 0777, Typeflag: tar.TypeSymlink, Linkname: target}
				content = ""
			}
			if err := tw.WriteHeader(hdr); err != nil {
				t.Fatalf("unable to make a layer: %v", err)
			}
			if _, err := tw.Write([]byte(content)); err != nil {
				t.Fatalf("unable to make a layer: %v", err)
			}
		}
		if err := tw.Close(); err != nil {
			t.Fatalf("unable to make a layer: %v", err)
		}
		data := buf.Bytes()
		layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
		if err != nil {
			t.Fatalf("unable to make a layer: %v", err)
		}
		if img, err = mutate.AppendLayers(img, layer); err != nil {
			t.Fatalf("unable to append a layer: %v", err)
		}
	}
	return img
}

// withConfig returns img with its configuration changed by change.
func withConfig(t *testing.T, img v1.Image, change func(*v1.Config)) v1.Image {
	t.Helper()
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatalf("unable to read a synthetic image's configuration: %v", err)
	}
	cfg = cfg.DeepCopy()
	change(&cfg.Config)
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		t.Fatalf("unable to change a synthetic image's configuration: %v", err)
	}
	return img
}

package audit_test

import (
	"testing"

	"github.com/google/go-containerregistry/pkg/crane"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// syntheticImage is an empty image whose configuration carries labels and env.
func syntheticImage(t *testing.T, labels map[string]string, env ...string) v1.Image {
	t.Helper()
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		OS:           "linux",
		Architecture: "amd64",
		Config:       v1.Config{Labels: labels, Env: env},
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

// withLayers appends to img one layer per map of file paths to contents.
func withLayers(t *testing.T, img v1.Image, layers ...map[string]string) v1.Image {
	t.Helper()
	for _, files := range layers {
		contents := map[string][]byte{}
		for name, content := range files {
			contents[name] = []byte(content)
		}
		layer, err := crane.Layer(contents)
		if err != nil {
			t.Fatalf("unable to make a layer: %v", err)
		}
		if img, err = mutate.AppendLayers(img, layer); err != nil {
			t.Fatalf("unable to append a layer: %v", err)
		}
	}
	return img
}

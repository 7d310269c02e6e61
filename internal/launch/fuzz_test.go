package launch_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pid1-buildpacks/init/internal/launch"
	"github.com/pid1-buildpacks/init/internal/rewrite"
)

// FuzzReadLaunchTOML reads random launch.toml files, as other buildpacks write them, in each
// Buildpack API format: reading must return processes or an error naming the file, never panic,
// and each process read must be one ExistingInit and Wrap take.
func FuzzReadLaunchTOML(f *testing.F) {
	f.Add("[[processes]]\ntype = \"web\"\ncommand = [\"env\", \"-S\", \"-i -S\", \"-i\", \"tini\", \"--\", \"app\"]\n", "0.10")
	f.Add("[[processes]]\ntype = \"web\"\ncommand = \"exec tini -- app\"\nargs = [\"a\"]\ndirect = false\n", "0.8")
	f.Add("[[processes]]\ntype = \"w\"\ncommand = [\"a\"]\ndefault = true\n[[processes]]\ntype = \"v\"\ncommand = [\"b\"]\ndefault = true\n", "")
	f.Add("[[processes]]\ntype = \"web\"\ncommand = 7\n", "0.9")

	f.Fuzz(func(t *testing.T, contents, api string) {
		path := filepath.Join(t.TempDir(), "launch.toml")
		if err := os.WriteFile(path, []byte(contents), 0o644); err != nil {
			t.Fatal(err)
		}
		processes, err := launch.ReadLaunchTOML(path, "other/buildpack", api)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not name %s: %v", path, err)
			}
			return
		}
		for _, p := range processes {
			if len(p.Command) == 0 {
				continue // an empty command is left as is (ReadLaunchTOML)
			}
			rewrite.ExistingInit(p, "/workspace", "/layers/pid1-buildpacks_init/init/sbin/init")
			w := rewrite.Wrap(p, "/layers/pid1-buildpacks_init/init/sbin/init", rewrite.Image{}, false)
			if len(w.Command) < 3 || w.Command[1] != rewrite.Separator {
				t.Fatalf("%q wrapped as %q", p.Command, w.Command)
			}
		}
	})
}

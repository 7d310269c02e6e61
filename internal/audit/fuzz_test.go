package audit_test

import (
	"strings"
	"testing"

	"github.com/pid1-buildpacks/init/internal/audit"
)

// FuzzImage audits app images whose label io.buildpacks.build.metadata and
// /layers/config/metadata.toml are random: the audit must return a report or an error, never
// panic, and cover an image only without problems.
func FuzzImage(f *testing.F) {
	const ours = "/layers/pid1-buildpacks_init/init/sbin/init"
	f.Add(`{"processes":[{"type":"web","command":["`+ours+`","--","app"],"direct":true}],"buildpacks":[{"id":"pid1-buildpacks/init"}]}`,
		"[[buildpacks]]\n  id = \"pid1-buildpacks/init\"\n[[processes]]\n  type = \"web\"\n  command = [\""+ours+"\", \"--\", \"app\"]\n  direct = true\n", "BPL_INIT_ENABLED")
	f.Add(`{"processes":[{"type":"web","command":"`+ours+`","args":["--version"],"direct":true}]}`, "", "")
	f.Add(`{"processes":[{"type":"web","command":["env","-S","-i -S","-i","`+ours+`","--","a"],"direct":true}]}`, "[[processes]]\ncommand = 7\n", "BPL_INIT_LOG_LEVEL.append")

	f.Fuzz(func(t *testing.T, label, metadataTOML, envFile string) {
		files := map[string]string{}
		if metadataTOML != "" {
			files["layers/config/metadata.toml"] = metadataTOML
		}
		if envFile != "" && !strings.ContainsAny(envFile, "/\x00") {
			files["layers/pid1-buildpacks_init/init/env.launch/"+envFile] = "false"
		}
		img := syntheticImage(t, map[string]string{"io.buildpacks.build.metadata": label}, "BPL_INIT_LOG_LEVEL=info")
		if len(files) > 0 {
			img = withLayers(t, img, files)
		}
		r, err := audit.Image("i", img)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		if r.Covered != (len(r.Problems) == 0) {
			t.Fatalf("covered %v with problems %q", r.Covered, r.Problems)
		}
		if r.Covered && len(r.Processes) == 0 {
			t.Fatal("covered without process types")
		}
	})
}

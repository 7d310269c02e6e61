package rewrite_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
	"github.com/buildpacks/libcnb/v2"

	"github.com/pid1-buildpacks/init/internal/launch"
	"github.com/pid1-buildpacks/init/internal/rewrite"
)

var fuzzAPIs = []string{"0.7", "0.8", "0.9", "0.10"}

type legacyLaunchTOML struct {
	Processes []struct {
		Type    string   `toml:"type"`
		Command string   `toml:"command"`
		Args    []string `toml:"args"`
		Direct  bool     `toml:"direct"`
	} `toml:"processes"`
}

type currentLaunchTOML struct {
	Processes []struct {
		Type    string   `toml:"type"`
		Command []string `toml:"command"`
		Args    []string `toml:"args"`
	} `toml:"processes"`
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")
}

func writeTOML(t *testing.T, path string, v interface{}) {
	t.Helper()
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(v); err != nil {
		t.Fatalf("unable to encode %s: %s", path, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0644); err != nil {
		t.Fatal(err)
	}
}

// FuzzWrap writes a random process in a random Buildpack API format to a launch.toml, reads it
// back, wraps it, writes and reads the wrapped launch.toml, and checks with the model of the
// launcher that, with and without user arguments and under both Platform API regimes, what the
// launcher executes is the init, "--" and exactly what it executed for the original process.
// Elements of command, args and user are separated by NUL, which no argv element can hold.
func FuzzWrap(f *testing.F) {
	f.Add(uint8(1), true, "python", "app.py\x00--debug", "extra", true)
	f.Add(uint8(1), false, "bundle exec rackup", "", "-p\x008080", true)
	f.Add(uint8(0), true, "/workspace/run", "", "", false)
	f.Add(uint8(2), false, "node\x00server.js", "--port\x008080", "x", true)
	f.Add(uint8(3), false, "java", "-jar\x00app.jar", "", true)
	f.Add(uint8(3), false, "a\x00b", "", "", false)
	f.Add(uint8(1), false, "echo $HOME", "a b", "", true)

	f.Fuzz(func(t *testing.T, apiIndex uint8, direct bool, command, args, user string, withUser bool) {
		for _, s := range []string{command, args, user} {
			if !utf8.ValidString(s) {
				t.Skip("TOML strings are UTF-8")
			}
		}
		api := fuzzAPIs[int(apiIndex)%len(fuzzAPIs)]
		legacy := api == "0.7" || api == "0.8"
		if legacy && strings.Contains(command, "\x00") {
			t.Skip("a Buildpack API 0.8 command is one argv element")
		}
		var userArgs []string
		if withUser {
			userArgs = strings.Split(user, "\x00")
		}

		dir := t.TempDir()
		original := filepath.Join(dir, "original.toml")
		if legacy {
			var lt legacyLaunchTOML
			lt.Processes = append(lt.Processes, struct {
				Type    string   `toml:"type"`
				Command string   `toml:"command"`
				Args    []string `toml:"args"`
				Direct  bool     `toml:"direct"`
			}{"web", command, split(args), direct})
			writeTOML(t, original, lt)
		} else {
			direct = true
			var ct currentLaunchTOML
			ct.Processes = append(ct.Processes, struct {
				Type    string   `toml:"type"`
				Command []string `toml:"command"`
				Args    []string `toml:"args"`
			}{"web", strings.Split(command, "\x00"), split(args)})
			writeTOML(t, original, ct)
		}

		processes, err := launch.ReadLaunchTOML(original, "some/buildpack", api)
		if err != nil {
			t.Fatalf("unable to read the original launch.toml: %s", err)
		}
		merged := launch.Merge([][]launch.Process{processes})
		if len(merged.Processes) != 1 {
			t.Fatalf("expected one process, got %d", len(merged.Processes))
		}
		p := merged.Processes[0]

		wrappedPath := filepath.Join(dir, "wrapped.toml")
		writeTOML(t, wrappedPath, libcnb.LaunchTOML{Processes: []libcnb.Process{rewrite.Wrap(p, initPath, rewrite.Image{}, false)}})
		rewritten, err := launch.ReadLaunchTOML(wrappedPath, "pid1-buildpacks/init", "0.10")
		if err != nil {
			t.Fatalf("unable to read the wrapped launch.toml as Buildpack API 0.10: %s", err)
		}
		w := rewritten[0]
		if w.Type != "web" || !w.Direct {
			t.Fatalf("wrapped process: %+v", w)
		}

		before := process{command: p.Command, args: p.Args, legacy: legacy, direct: direct}
		after := process{command: w.Command, args: w.Args, direct: true}
		for _, platform010 := range []bool{true, false} {
			for _, u := range [][]string{nil, userArgs} {
				got := directArgv(after, platform010, u)
				if !slices.Equal(got[:2], []string{initPath, rewrite.Separator}) {
					t.Fatalf("argv does not start with the init: %q", got)
				}
				var want []string
				if direct {
					want = directArgv(before, platform010, u)
				} else {
					// The shell process's command line and arguments become the script's positional
					// parameters; the script makes the launcher's bash invocation from them
					// (see shell_test.go, which runs both).
					c, a := effectiveArgs(before, platform010, u)
					want = concat([]string{rewrite.Bash, "-c", rewrite.ShellScript("web", "", rewrite.Image{}), rewrite.Caller("web"), c[0]}, a)
				}
				if !slices.Equal(got[2:], want) {
					t.Fatalf("API %s direct=%t platform>=0.10=%t user=%q:\nlauncher ran %q\nwrapped runs %q", api, direct, platform010, u, want, got[2:])
				}
			}
		}
	})
}

// FuzzExistingInit runs random shell lines and argvs through ExistingInit: it must not panic,
// and what it recognises is ours or a file name that the process names.
func FuzzExistingInit(f *testing.F) {
	const appDir = "/workspace"
	f.Add("exec tini -- app", "env\x00-S\x00tini --")
	f.Add(`A="$B" exec -a x 'dumb-init' app | cat`, "bash\x00-ec\x00exec tini -- a")
	f.Add("# c\ntini-static-amd64 -- a \\\n b", "/workspace/tini")
	f.Add("exec \"tini\" -- a; x", "sh\x00-c\x00exec env -u X /usr/bin/catatonit --")

	f.Fuzz(func(t *testing.T, line, argv string) {
		for _, p := range []launch.Process{
			{Command: []string{line}, Legacy: true},
			{Command: []string{line}, Args: []string{"a"}, Legacy: true},
			{Command: strings.Split(argv, "\x00"), Direct: true},
		} {
			name, ok := rewrite.ExistingInit(p, appDir, initPath)
			switch {
			case !ok && name != "":
				t.Fatalf("%q: not recognised, yet named %q", p.Command, name)
			case ok && name != initPath && (strings.Contains(name, "/") || !strings.Contains(line+argv, name)):
				t.Fatalf("%q recognised as %q, which is neither ours nor a name it holds", p.Command, name)
			}
		}
	})
}

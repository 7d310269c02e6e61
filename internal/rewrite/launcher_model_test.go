package rewrite_test

// This file models, for the tests, how the lifecycle v0.21.11 launcher turns a process of the
// image's metadata and the user's arguments (`docker run IMAGE args...`) into what it executes.
// Read from launch/launch.go (Process.WithPlatformAPI), launch/process.go (ProcessFor,
// handleUserArgs, handleUserArgsPlatformLessThan010), launch/launcher.go (launchDirect) and
// launch/shell.go, launch/bash.go (launchWithShell, getProfiles, BashShell.Launch).

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// process is a process as the launcher sees it in the image's metadata.
type process struct {
	command []string
	args    []string
	// legacy is true when the process's buildpack has Buildpack API 0.8 or older.
	legacy bool
	direct bool
}

func concat(parts ...[]string) []string {
	out := []string{}
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// effectiveArgs returns the command and arguments the launcher settles on before executing p.
func effectiveArgs(p process, platform010 bool, user []string) (command []string, args []string) {
	if !platform010 {
		// WithPlatformAPI keeps only the first command element, the rest go in front of args;
		// user arguments are always appended.
		return p.command[:1], concat(p.command[1:], p.args, user)
	}
	switch {
	case len(p.command) > 1:
		if len(user) > 0 {
			return p.command[:1], concat(p.command[1:], user)
		}
		return p.command[:1], concat(p.command[1:], p.args)
	case len(user) == 0:
		return p.command, p.args
	case p.legacy:
		return p.command, concat(p.args, user)
	default:
		return p.command, user
	}
}

// directArgv is the argv the launcher passes to execve for a direct process.
func directArgv(p process, platform010 bool, user []string) []string {
	command, args := effectiveArgs(p, platform010, user)
	return concat(command, args)
}

// shell is what the launcher knows at launch about a shell process besides its command: the
// profile scripts it found (launcherProfiles), the working directory (the app directory when
// the process has none) and the name it was started as.
type shell struct {
	profiles []string
	dir      string
	caller   string
}

// shellArgv is the argv the launcher passes to execve(/bin/bash) for a shell process
// (launch/bash.go): its script sources each profile, cds to the working directory, then runs
// `exec bash -c "$@"` when there are no arguments, else a command made of one
// `"$(eval echo \"${i}\")"` token per argument.
func shellArgv(p process, platform010 bool, user []string, sh shell) []string {
	command, args := effectiveArgs(p, platform010, user)
	script := ""
	for _, profile := range sh.profiles {
		script += "source \"" + profile + "\"\n"
	}
	script += "cd \"" + sh.dir + "\"\n"
	if len(args) == 0 {
		script += `exec bash -c "$@"`
	} else {
		tokens := `"$(eval echo \"$0\")"`
		for i := 1; i < len(args)+1; i++ {
			tokens += ` "$(eval echo \"${` + itoa(i) + `}\")"`
		}
		script += `exec bash -c '` + tokens + `' "${@:1}"`
	}
	line := command[0]
	for _, c := range command[1:] {
		line += " " + c
	}
	return concat([]string{"bash", "-c", script, sh.caller, line}, args)
}

// launcherProfiles returns the profile scripts the launcher sources for a shell process of type
// processType (launch/shell.go getProfiles, launch/launcher.go eachBuildpack, eachLayer,
// eachFile): for every buildpack of group that has a directory in layersDir, for every
// directory in it in os.ReadDir's order (by name), the files (not directories) of profile.d/,
// then of profile.d/<type>/; then ".profile" when the app directory has one that is not a
// directory.
func launcherProfiles(t *testing.T, layersDir, appDir string, group []string, processType string) []string {
	t.Helper()
	var profiles []string
	each := func(dir string, wantDir bool, action func(string)) {
		entries, err := os.ReadDir(dir)
		if err != nil && !os.IsNotExist(err) {
			t.Fatalf("the launcher fails here: %s", err)
		}
		for _, e := range entries {
			if e.IsDir() == wantDir {
				action(filepath.Join(dir, e.Name()))
			}
		}
	}
	for _, id := range group {
		each(filepath.Join(layersDir, strings.ReplaceAll(id, "/", "_")), true, func(layer string) {
			add := func(path string) { profiles = append(profiles, path) }
			each(filepath.Join(layer, "profile.d"), false, add)
			each(filepath.Join(layer, "profile.d", processType), false, add)
		})
	}
	if fi, err := os.Stat(filepath.Join(appDir, ".profile")); err == nil && !fi.IsDir() {
		profiles = append(profiles, ".profile")
	}
	return profiles
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

package rewrite

import "strings"

// shellScriptMark starts every script ShellScript returns. It keeps the script on its first
// line, where the launcher's script starts, so that bash's messages name the same line numbers.
const shellScriptMark = `eval "$(: pid1-buildpacks/init: the launcher script of a shell process; `

// CallerPrefix is where the launcher's process type links are: a shell process's bash runs with
// $0 = CallerPrefix + type, the path the launcher was started as.
const CallerPrefix = "/cnb/process/"

// ShellScript returns the bash script a wrapped Buildpack API 0.7/0.8 shell process of type
// processType runs, with $0 = CallerPrefix + processType and the positional parameters the
// original command line, the process arguments and the user's arguments.
//
// The script writes, at launch, the script the launcher (lifecycle launch/shell.go,
// launch/bash.go) would have run, and evaluates it in the same bash: for every buildpack of
// image.Group in order and every layer of it in directory order, `source "<file>"` for each file of
// the layer's profile.d/ and then of profile.d/<type>/; `source ".profile"` when the app
// directory has one; `cd "<dir>"`, so that the working directory expands as a word and a failed
// cd carries on in the app directory; then `exec bash -c "$@"` when there are no arguments, else
// `exec bash -c '"$(eval echo \"$0\")" "$(eval echo \"${1}\")" ...' "${@:1}"`. Which files exist
// is known only at launch: a layer reused from the previous image is not on disk at build.
// workingDir empty means the app directory.
func ShellScript(processType, workingDir string, image Image) string {
	var s strings.Builder
	s.WriteString(shellScriptMark)
	// Options and variables a bash imports from the environment (SHELLOPTS, BASHOPTS, GLOBSORT)
	// must not change what the subshell lists: the launcher lists with Go.
	s.WriteString(`LC_ALL=C; set +f; shopt -u failglob; unset GLOBSORT; shopt -s nullglob dotglob; `)
	s.WriteString(`t=` + quote(processType) + `; w=` + quote(workingDir) + `; `)
	s.WriteString(`a=` + quote(image.AppDir) + `; l=` + quote(strings.TrimSuffix(image.LayersDir, "/")) + `; `)
	s.WriteString(`for b in`)
	for _, id := range image.Group {
		s.WriteString(" " + quote(strings.ReplaceAll(id, "/", "_")))
	}
	s.WriteString(`; do for d in "$l/$b"/*; do [[ -d $d && ! -L $d ]] || continue; `)
	s.WriteString(`for f in "$d"/profile.d/* "$d/profile.d/$t"/*; do `)
	s.WriteString(`[[ -d $f && ! -L $f ]] || printf 'source "%s"\n' "$f"; done; done; done; `)
	s.WriteString(`[[ -e $a/.profile && ! -d $a/.profile ]] && printf 'source ".profile"\n'; `)
	s.WriteString(`printf 'cd "%s"\n' "${w:-$a}"; `)
	s.WriteString(`if [ "$#" -eq 1 ]; then printf '%s' 'exec bash -c "$@"'; else `)
	s.WriteString(`c='"$(eval echo \"$0\")"'; i=1; `)
	s.WriteString(`while [ "$i" -lt "$#" ]; do c="$c \"\$(eval echo \\\"\${$i}\\\")\""; i=$((i+1)); done; `)
	s.WriteString(`printf 'exec bash -c '\''%s'\'' "${@:1}"' "$c"; fi`)
	s.WriteString(`)"`)
	return s.String()
}

// Image is what the launcher knows of an image when it starts a shell process: the layers and
// app directories, which the exporter records as the image's CNB_LAYERS_DIR and CNB_APP_DIR (the
// build's), and the group's buildpack ids in order (its metadata.toml). The launcher reads both
// variables and leaves them out of the process's environment (lifecycle env/launch.go), so a
// wrapped process's script cannot read them at launch: they are written into it at build.
type Image struct {
	LayersDir string
	AppDir    string
	Group     []string
}

// IsShellScript reports whether s is a script ShellScript returned.
func IsShellScript(s string) bool {
	return strings.HasPrefix(s, shellScriptMark)
}

// Caller returns the $0 the launcher gives the bash of a shell process of type processType.
func Caller(processType string) string {
	return CallerPrefix + processType
}

// quote returns s as one single-quoted shell word.
func quote(s string) string {
	return `'` + strings.ReplaceAll(s, `'`, `'\''`) + `'`
}

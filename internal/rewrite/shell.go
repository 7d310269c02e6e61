package rewrite

// ShellScript is the bash script a wrapped Buildpack API 0.8 shell process runs. Its positional
// parameters are the original command line followed by the process arguments and the user's
// arguments. Like the launcher's launch/bash.go it runs, with one parameter, the command line as a
// bash script (`bash -c "<command>"`), and otherwise `bash -c '<tokens>' <command> <args...>`,
// where each token is `"$(eval echo \"${i}\")"`: every argument, and the command line as one
// word, is expanded by the shell before the result is executed.
const ShellScript = `if [ "$#" -eq 1 ]; then exec bash -c "$1"; fi; ` +
	`s='"$(eval echo \"$0\")"'; i=1; ` +
	`while [ "$i" -lt "$#" ]; do s="$s \"\$(eval echo \\\"\${$i}\\\")\""; i=$((i+1)); done; ` +
	`exec bash -c "$s" "$@"`

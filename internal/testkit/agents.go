package testkit

// SteerAgent is an agent command (a script for sh) that stands in for the
// built-in agent's stream-json protocol (supervisor/builtin's steer.go),
// for the steering tests of the engine and of each runner (SPEC §11): it
// reads its task line and says "working", takes one further stdin line
// and says so with that line's uuid as the built-in agent does between
// two files ("↪ took message <uuid> (folded) after 1 file, before x.go:
// steer"), says its task is done, reads until stdin closes and then says
// "stdin-closed".
const SteerAgent = `read -r first; echo working
read -r line
id=$(printf '%s' "$line" | sed 's/.*"uuid":"\([^"]*\)".*/\1/')
echo "↪ took message $id (folded) after 1 file, before x.go: steer"
echo "↪ task done"
while read -r more; do :; done
echo stdin-closed`

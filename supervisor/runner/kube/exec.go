package kube

import (
	"context"
	"io"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/streaming/pkg/httpstream"
)

// wrapper runs the agent command for one submission in the pod. $1 is the
// nonce, $2 the command, then the submission's variables as NAME=value.
// Given the nonce alone it is a warm exec (warm.go): it writes the ready
// token "\x1esubdash:<nonce>:ready\x1e" to stdout and reads the command
// and variables from stdin first (header), then the message follows as the
// command's stdin (sh's read takes one byte at a time from a pipe, so none
// of it is consumed). The command runs in a subshell that exports the
// variables (so only its processes carry SUBDASH_SUBMISSION_ID, not the
// wrapper); when it ends, the wrapper counts the processes it left and
// writes the marker with the exit status and that count to stderr. Exit
// statuses above 128 are signals, as sh reports them.
const wrapper = `nonce=$1
if [ $# -eq 1 ]; then
  printf '\036subdash:%s:ready\036' "$nonce"
  IFS= read -r cmd || exit 0
  cmd=$(printf '%bx' "$cmd"); cmd=${cmd%x}
  IFS= read -r n || exit 0
  set --
  while [ "$n" -gt 0 ]; do IFS= read -r kv || exit 0; kv=$(printf '%bx' "$kv"); set -- "$@" "${kv%x}"; n=$((n-1)); done
else
  cmd=$2; shift 2
fi
id=
for kv in "$@"; do case $kv in SUBDASH_SUBMISSION_ID=*) id=${kv#*=};; esac; done
` + oursFunc + `
( for kv in "$@"; do export "$kv"; done; exec /bin/sh -c "$cmd" )
st=$?
n=0
for d in /proc/[0-9]*; do
  if ours "$d"; then n=$((n+1)); fi
done
printf '\036subdash:%s:exit:%d:%d\036' "$nonce" "$st" "$n" >&2
exit "$st"
`

// header is what a warm exec's wrapper reads before the message: the
// command, the number of variables and each variable, one line each, with
// backslashes and newlines escaped as printf's %b reads them.
func header(command string, vars []string) string {
	esc := strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	var b strings.Builder
	b.WriteString(esc.Replace(command) + "\n" + strconv.Itoa(len(vars)) + "\n")
	for _, v := range vars {
		b.WriteString(esc.Replace(v) + "\n")
	}
	return b.String()
}

// oursFunc is the shell function ours DIR: whether process /proc/DIR's
// environment holds SUBDASH_SUBMISSION_ID=$id. It reads the environment
// with the shell's own read (which drops the NUL separators, so it sees
// the variables run together), without forking: the wrapper and the
// killer ask it of every process of the container, and two forks per
// process (tr and grep) cost 0.3–0.7 s per scan on the loaded test
// cluster. A submission id is a UUID of fixed length, so no other id
// contains it.
const oursFunc = `ours() { { while IFS= read -r e || [ -n "$e" ]; do case $e in *"SUBDASH_SUBMISSION_ID=$id"*) return 0;; esac; done < "$1/environ"; } 2>/dev/null; return 1; }`

// killer terminates every process of submission $1 in the container: the
// processes whose environment holds its SUBDASH_SUBMISSION_ID, wherever
// they moved. SIGTERM (and SIGCONT) to all, SIGKILL after $2 tenths of a
// second to what is left, and again until none is left (at most 10 s more);
// $2 below 0 skips the SIGTERM: SIGKILL at once. It prints "survived
// <pids>" when some did. Scanning environments forks two processes per
// process of the container, so between scans it only watches the pids it
// signalled, with shell builtins; time comes from /proc/uptime
// (hundredths of a second).
const killer = `id=$1; tenths=$2
` + oursFunc + `
scan() { P=; for d in /proc/[0-9]*; do ours "$d" && P="$P ${d#/proc/}"; done; }
live() { L=; for q in $P; do s=; { read -r s < /proc/$q/stat; } 2>/dev/null || continue; case ${s##*) } in Z*|X*) ;; *) L="$L $q";; esac; done; }
now() { read -r u _ < /proc/uptime; T=${u%.*}${u#*.}; }
tick() { sleep 0.05 2>/dev/null || sleep 1; }
scan; [ -z "$P" ] && exit 0
if [ "$tenths" -ge 0 ]; then
kill -TERM $P 2>/dev/null; kill -CONT $P 2>/dev/null
now; end=$((T + tenths * 10))
while :; do
  live; if [ -z "$L" ]; then scan; [ -z "$P" ] && exit 0; kill -TERM $P 2>/dev/null; kill -CONT $P 2>/dev/null; fi
  now; [ "$T" -ge "$end" ] && break
  tick
done
fi
now; end=$((T + 1000))
while :; do
  scan; [ -z "$P" ] && exit 0
  kill -KILL $P 2>/dev/null
  while :; do live; [ -z "$L" ] && break; now; [ "$T" -ge "$end" ] && { echo survived $L; exit 0; }; tick; done
done
`

// exec runs command in pod's agent container with the given streams and
// returns when it ended: nil for exit status 0, an error with ExitStatus()
// for another status, or another error when the stream failed.
func (r *Runner) exec(ctx context.Context, pod string, command []string, stdin io.Reader, stdout, stderr io.Writer) error {
	req := r.cs.CoreV1().RESTClient().Post().Resource("pods").Name(pod).Namespace(r.ns).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: command,
			Stdin: stdin != nil, Stdout: stdout != nil, Stderr: stderr != nil}, scheme.ParameterCodec)
	spdy, err := remotecommand.NewSPDYExecutor(r.rc, "POST", req.URL())
	if err != nil {
		return err
	}
	ws, err := remotecommand.NewWebSocketExecutor(r.rc, "GET", req.URL().String())
	if err != nil {
		return err
	}
	ex, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return err
	}
	return ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr})
}

// writerFunc is an io.Writer that hands each write to a function.
type writerFunc func([]byte)

// Write calls f with b; it never fails.
func (f writerFunc) Write(b []byte) (int, error) { f(b); return len(b), nil }

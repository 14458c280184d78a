#!/usr/bin/env bash
# How runs/ was written: two runs of subdash serve as built from main at
# dad5536 (SUBDASH=that binary), in /tmp/subdash-golden, then
# cp -a /tmp/subdash-golden/state/runs here. Run 1 (a plain agent command)
# spawns, sends, closes, resumes, forgets, interrupts, queues, and is killed
# with SIGKILL while one agent runs with a message queued; run 2 (--preset
# builtin) restores it, runs one agent more and ends cleanly. The
# records-*.json are what that release's loadRecords made of them: run 1
# alone, run 1 with its last 40 bytes cut, and both runs (the journals'
# modification times set to their last line's time).
set -euo pipefail
B=${SUBDASH:-subdash}
G=/tmp/subdash-golden
rm -rf $G; mkdir -p $G/work $G/state
export SUBDASH_STATE_DIR=$G/state XDG_RUNTIME_DIR=$G/rt
mkdir -p $G/rt; chmod 700 $G/rt
SCRIPT='read m; case "$m" in ok*) echo "fine $m"; printf "\033[31mred\033[0m done\n";; bad*) echo oops >&2; exit 3;; *) sleep 300;; esac'
ctl() { $B ctl --dir $G/work "$@"; }
id() { jq -r .agent_id; }
wait_final() { ctl wait "$1" --timeout-ms 20000 >/dev/null; }

# Run 1: a plain agent command; ends by SIGKILL with one agent running and a message queued.
$B serve --dir $G/work --command "$SCRIPT" --grace 200ms 2>$G/serve1.err &
P1=$!
for i in $(seq 100); do ctl info >/dev/null 2>&1 && break; sleep 0.1; done
A=$(ctl spawn "ok one" | id); wait_final $A
ctl send $A "bad two" >/dev/null; wait_final $A
ctl close $A >/dev/null
ctl resume $A >/dev/null
BIG="ok big $(head -c 6000 /dev/zero | tr '\0' 'x')"
Bg=$(ctl spawn "$BIG" | id); wait_final $Bg
C=$(ctl spawn "ok forgotten" | id); wait_final $C
ctl forget $C >/dev/null
D=$(ctl spawn "hang d" | id)
sleep 0.5
ctl interrupt $D >/dev/null; wait_final $D
ctl send $D "ok d again" >/dev/null; wait_final $D
ctl close $D >/dev/null
E=$(ctl spawn "hang e" | id)
ctl send $E "ok queued e" --queue >/dev/null
sleep 0.5
kill -9 $P1; wait $P1 || true
# Run 2: the builtin preset restores run 1, runs one agent, and ends cleanly.
sleep 1.1
$B serve --dir $G/work --preset builtin --grace 200ms 2>$G/serve2.err &
P2=$!
for i in $(seq 100); do ctl info >/dev/null 2>&1 && break; sleep 0.1; done
F=$(ctl spawn "summarize ." | id); wait_final $F
ctl send $A "ok three" >/dev/null; wait_final $A
kill -TERM $P2; wait $P2 || true
echo "A=$A B=$Bg C=$C D=$D E=$E F=$F"
cat $G/serve1.err $G/serve2.err
find $G/state -type f | sort

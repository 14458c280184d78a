#!/usr/bin/env bash
# How runs/ was written: one run of `subdash mcp --tools multi-agent` as
# built from main at 2b64651 (SUBDASH=that binary, copied to $G/bin), in
# /tmp/subdash-2b64651, then cp -a $G/state/runs here. The session spawns
# /root/lead (split: children /root/lead/alpha and /root/lead/beta) and
# /root/steerer, steers a message into steerer's running submission
# (ctl send --steer: its receipt), queues one for steerer's next
# submission (ctl send --queue), holds one for lead (send_message), and
# the host ends with SIGTERM while steerer still runs: the mailboxes keep
# the queued and held messages and the children's ends.
set -euo pipefail
B=${SUBDASH:-subdash}
G=/tmp/subdash-2b64651
rm -rf $G; mkdir -p $G/work/alpha $G/work/beta $G/state $G/rt $G/bin
chmod 700 $G/rt
cp "$B" $G/bin/subdash; B=$G/bin/subdash
export SUBDASH_STATE_DIR=$G/state XDG_RUNTIME_DIR=$G/rt
for d in alpha beta; do
  for i in 1 2 3 4 5 6; do printf 'x := %d // TODO: %s %d\n// FIXME: %s\n' $i $d $i $d >$G/work/$d/f$i.go; done
done
for i in $(seq 30); do printf '// TODO: top %d\n' $i; done >$G/work/top.go
ctl() { $B ctl --dir $G/work "$@"; }
mkfifo $G/in
$B mcp --tools multi-agent --dir $G/work --preset builtin --preset-args "--pace 150ms" \
  --allow-nested --grace 200ms <$G/in >$G/mcp.out 2>$G/mcp.err &
P=$!
exec 3>$G/in
rpc() { printf '%s\n' "$1" >&3; }
call() { rpc "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"$2\",\"arguments\":$3}}"; }
rpc '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"gen","version":"1"}}}'
rpc '{"jsonrpc":"2.0","method":"notifications/initialized"}'
for i in $(seq 100); do ctl info >/dev/null 2>&1 && break; sleep 0.1; done
call 2 spawn_agent '{"task_name":"lead","message":"split ."}'
call 3 spawn_agent '{"task_name":"steerer","message":"audit ."}'
for i in $(seq 100); do ctl list | grep -q '"/root/steerer"' && ctl list | grep -q '"/root/lead/beta"' && break; sleep 0.1; done
sleep 0.5
ctl send /root/steerer "also find FIXME in alpha" --steer
ctl send /root/steerer "summarize beta" --queue
call 4 send_message '{"target":"/root/lead","message":"a note held for the lead"}'
# the children and lead end (their ends go to lead's and the session's mailbox); steerer still runs
for i in $(seq 200); do
  ctl list | jq -e '[.agents[] | select(.agent_path != "/root/steerer") | .status] | all(. != "running")' >/dev/null && break
  sleep 0.1
done
ctl list | jq -e '.agents[] | select(.agent_path == "/root/steerer") | .status == "running"'
ctl list | jq '[.agents[] | {agent_path, status, queued_messages, steered: [.steered_messages[]? | .receipt]}]'
kill -TERM $P; wait $P || true
exec 3>&-
# Run 2: subdash serve restores run 1 (its checkpoint carries the records
# and the session's root mailbox on) and ends at once.
sleep 1.1
$B serve --dir $G/work --preset builtin --preset-args "--pace 150ms" --allow-nested --grace 200ms 2>$G/serve.err &
P=$!
for i in $(seq 100); do ctl info >/dev/null 2>&1 && break; sleep 0.1; done
ctl list | jq '[.agents[] | {agent_path, status, queued_messages, steered: [.steered_messages[]? | .receipt]}]'
kill -TERM $P; wait $P || true
cat $G/mcp.out $G/mcp.err $G/serve.err
find $G/state -type f | sort

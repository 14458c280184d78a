#!/usr/bin/env bash
# sshd-down.sh [DIR]: stop the sshd that sshd-up.sh started from DIR (or
# $SUBDASH_SSHD_DIR, default $HOME/.cache/subdash-sshd), and the sessions
# it serves. Keeps the keys, so the next sshd-up.sh is warm. With --purge
# after DIR, removes DIR too. Exit 0 also when nothing was running.
set -euo pipefail
DIR=${1:-${SUBDASH_SSHD_DIR:-${HOME:?HOME is unset: give DIR}/.cache/subdash-sshd}}
[ -d "$DIR" ] || exit 0
DIR=$(cd "$DIR" && pwd -P)
if [ -s "$DIR/sshd.pid" ]; then
	pid=$(cat "$DIR/sshd.pid")
	# Only ours: the pid's command line names our config.
	if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "-f $DIR/sshd_config"; then
		# SIGTERM ends the listener only; the per-connection children are
		# in sessions of their own. Stop the listener first, so that no
		# connection forks a child between the look and the kill, then end
		# its children, then it (a stopped process takes SIGKILL only).
		kill -STOP "$pid" 2>/dev/null || true
		kids=$(ps -o pid= --ppid "$pid" 2>/dev/null || true)
		# shellcheck disable=SC2086 # one pid per word
		[ -z "$kids" ] || kill -TERM $kids 2>/dev/null || true
		kill -KILL "$pid" 2>/dev/null || true
		# A zombie (its parent, pid 1 here, may reap late) has an empty
		# command line: gone.
		ours() { tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "-f $DIR/sshd_config"; }
		for _ in $(seq 100); do
			ours || break
			sleep 0.02
		done
		# Any session left (a child the listener forked as it was
		# stopped): every process that holds a connection to our port.
		port=$(sed -n 's/^Port //p' "$DIR/sshd_config" 2>/dev/null | head -1)
		if [ -n "$port" ] && command -v ss >/dev/null 2>&1; then
			left=$(ss -Htnp state established "( sport = :$port )" 2>/dev/null | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u || true)
			# shellcheck disable=SC2086 # one pid per word
			[ -z "$left" ] || kill -TERM $left 2>/dev/null || true
		fi
	fi
	rm -f "$DIR/sshd.pid"
fi
if [ "${2:-}" = --purge ]; then
	rm -rf "$DIR"
fi

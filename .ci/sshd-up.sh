#!/usr/bin/env bash
# sshd-up.sh [DIR]: a private OpenSSH sshd on 127.0.0.1 for subdash's ssh
# tests (.ci/run starts one for the whole run; internal/testkit.SSHD one per
# test where none is given).
#
# Starts (or finds running) an sshd of its own, as whichever user runs this
# script, with its own host key, sshd_config, authorized_keys and client
# config: key authentication only, no PAM, listening on 127.0.0.1 only.
# Installs Debian's openssh-server with apt-get when /usr/sbin/sshd is
# missing (root, or sudo without a password). Idempotent: a second run with
# the sshd alive only prints the exports (0.07 s measured; a start with
# the keys kept 0.4-0.7 s, a first run with apt-get install 13 s).
#
# DIR (or $SUBDASH_SSHD_DIR) holds everything; default
# $HOME/.cache/subdash-sshd. sshd's StrictModes (kept on) refuses an
# authorized_keys below a group- or world-writable folder between it and
# $HOME, so DIR must not be under /tmp (sticky 1777) unless the folders up
# to / are safe: this script checks and says so.
# SUBDASH_SSHD_STRICTMODES=no writes StrictModes no instead and skips that
# check: what a test's own sshd in a folder under /tmp needs
# (internal/testkit.SSHD).
# Port: $SUBDASH_SSHD_PORT, default 2222. SUBDASH_SSHD_FORWARDING=no: a
# server that refuses Unix-socket forwarding (default local: allowed).
#
# Prints, on stdout, lines to eval:
#   export SUBDASH_SSH_COMMAND="ssh -F DIR/ssh_config"
#   export SUBDASH_SSH_HOST=there ...
# Everything else goes to stderr. Exit 0: sshd answers a key login;
# 1: it could not be installed or started (the reason on stderr).
# Stop it with sshd-down.sh DIR.
set -euo pipefail

DIR=${1:-${SUBDASH_SSHD_DIR:-${HOME:?HOME is unset: give DIR}/.cache/subdash-sshd}}
PORT=${SUBDASH_SSHD_PORT:-2222}
FWD=${SUBDASH_SSHD_FORWARDING:-local}
case $FWD in local | no) ;; *) echo "sshd-up: SUBDASH_SSHD_FORWARDING is local or no, not $FWD" >&2; exit 2 ;; esac
STRICT=${SUBDASH_SSHD_STRICTMODES:-yes}
case $STRICT in yes | no) ;; *) echo "sshd-up: SUBDASH_SSHD_STRICTMODES is yes or no, not $STRICT" >&2; exit 2 ;; esac
SSHD=${SUBDASH_SSHD_BIN:-/usr/sbin/sshd}
ME=$(id -un)
say() { printf 'sshd-up: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# 1. openssh-server, installed the way .ci/run installs tmux.
if [ ! -x "$SSHD" ]; then
	SUDO=""
	if [ "$(id -u)" -ne 0 ]; then
		if ! command -v sudo >/dev/null 2>&1 || ! sudo -n true 2>/dev/null; then
			die "$SSHD is missing and $ME cannot install it (not root, no password-less sudo): apt-get install openssh-server as root first"
		fi
		SUDO="sudo -n"
	fi
	export DEBIAN_FRONTEND=noninteractive
	# The package's postinst starts the system sshd on port 22 (all
	# addresses) where invoke-rc.d may start services; a policy-rc.d that
	# says 101 stops that. Put one only where there is none, and take it
	# away again.
	policy_added=""
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
		$SUDO chmod 755 /usr/sbin/policy-rc.d
		policy_added=1
	fi
	say "installing openssh-server with apt-get"
	# An empty or old package list has no candidate: update first then.
	if ! apt-cache policy openssh-server 2>/dev/null | grep -q 'Candidate: [0-9]'; then
		$SUDO apt-get update -qq
	fi
	if ! $SUDO apt-get install -y -qq --no-install-recommends openssh-server >/dev/null; then
		$SUDO apt-get update -qq
		$SUDO apt-get install -y -qq --no-install-recommends openssh-server >/dev/null
	fi
	[ -n "$policy_added" ] && $SUDO rm -f /usr/sbin/policy-rc.d
	[ -x "$SSHD" ] || die "apt-get installed openssh-server but $SSHD is not there"
fi

# 2. The folder and its keys (made once; kept across runs).
umask 077
mkdir -p "$DIR"
chmod 700 "$DIR"
DIR=$(cd "$DIR" && pwd -P)
# StrictModes: every folder from DIR up to $HOME (or /) must belong to
# $ME or root and not be group/world-writable.
d=$DIR
home=$(cd ~ 2>/dev/null && pwd -P || echo /nonexistent)
while [ "$STRICT" = yes ]; do
	st=$(stat -c '%u %a' "$d")
	uid=${st% *} mode=${st#* }
	if { [ "$uid" != 0 ] && [ "$uid" != "$(id -u)" ]; } || [ $((8#$mode & 8#022)) -ne 0 ]; then
		die "$d (owner uid $uid, mode $mode) is group/world-writable or not $ME's: sshd's StrictModes would refuse the key ('bad ownership or modes for directory $d'); give a DIR below \$HOME"
	fi
	[ "$d" = "$home" ] || [ "$d" = / ] && break
	d=$(dirname "$d")
done

for k in host_ed25519 id_ed25519 id_other; do
	[ -s "$DIR/$k" ] || ssh-keygen -q -t ed25519 -N '' -C "subdash-test-$k" -f "$DIR/$k"
done
cp "$DIR/id_ed25519.pub" "$DIR/authorized_keys"
printf '[127.0.0.1]:%s %s\n' "$PORT" "$(cut -d' ' -f1,2 "$DIR/host_ed25519.pub")" >"$DIR/known_hosts"

cat >"$DIR/sshd_config.new" <<EOF
# Written by sshd-up.sh: a private sshd for tests, 127.0.0.1 only, keys only.
Port $PORT
ListenAddress 127.0.0.1
HostKey $DIR/host_ed25519
PidFile $DIR/sshd.pid
AuthorizedKeysFile $DIR/authorized_keys
AllowUsers $ME
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes $STRICT
# What subdash needs: Unix-socket forwarding (ssh -L local.sock:remote.sock,
# ssh -W remote.sock) and commands. OpenSSH 9.2 grants direct-streamlocal
# only where AllowTcpForwarding allows local forwarding: "no" (or
# PermitOpen none) also refuses -L and -W of a Unix socket ("Received
# request to connect to path ..., but the request was denied"), whatever
# AllowStreamLocalForwarding says. SUBDASH_SSHD_FORWARDING=no makes such a
# hardened server (only a remote-command bridge works there).
AllowStreamLocalForwarding $FWD
AllowTcpForwarding $FWD
AllowAgentForwarding no
X11Forwarding no
PermitTunnel no
PermitUserEnvironment no
PrintMotd no
PrintLastLog no
# Replace a stale socket file of an earlier -R forward (not used by -L).
StreamLocalBindUnlink yes
# No reverse DNS of 127.0.0.1 on each login.
UseDNS no
# Many quick sessions (a CI run, a benchmark) are not an attack.
MaxStartups 100:30:200
MaxSessions 100
LogLevel VERBOSE
Subsystem sftp internal-sftp
EOF
changed=1
cmp -s "$DIR/sshd_config.new" "$DIR/sshd_config" 2>/dev/null && changed=""
mv -f "$DIR/sshd_config.new" "$DIR/sshd_config"

cat >"$DIR/ssh_config" <<EOF
# Written by sshd-up.sh; use as: ssh -F $DIR/ssh_config there
# (-F replaces ~/.ssh/config and /etc/ssh/ssh_config).
Host there
	HostName 127.0.0.1
	Port $PORT
	User $ME
	IdentityFile $DIR/id_ed25519
# A key the sshd does not know: "Permission denied (publickey)".
Host there-nokey
	HostName 127.0.0.1
	Port $PORT
	User $ME
	IdentityFile $DIR/id_other
# Nothing listens on port 1: "Connection refused" at once.
Host there-down
	HostName 127.0.0.1
	Port 1
	User $ME
	IdentityFile $DIR/id_ed25519
Host *
	IdentitiesOnly yes
	IdentityAgent none
	UserKnownHostsFile $DIR/known_hosts
	GlobalKnownHostsFile /dev/null
	StrictHostKeyChecking yes
	UpdateHostKeys no
	ControlMaster no
	ControlPath none
	ConnectTimeout 10
EOF

# 3. Start sshd unless ours is alive with this config.
alive() {
	[ -s "$DIR/sshd.pid" ] || return 1
	pid=$(cat "$DIR/sshd.pid")
	kill -0 "$pid" 2>/dev/null || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "-f $DIR/sshd_config"
}
verify=""
if alive && [ -n "$changed" ]; then
	# sshd re-executes itself on SIGHUP (same pid) and reads the new config.
	kill -HUP "$(cat "$DIR/sshd.pid")"
	sleep 0.3
	verify=1
fi
if ! alive; then
	rm -f "$DIR/sshd.pid"
	# As root, sshd's privilege separation needs /run/sshd (the service's
	# unit or init script makes it; nobody did here).
	if [ "$(id -u)" -eq 0 ] && [ ! -d /run/sshd ]; then
		mkdir /run/sshd
		chmod 755 /run/sshd
	fi
	"$SSHD" -t -f "$DIR/sshd_config" || die "sshd -t refused $DIR/sshd_config (above)"
	# Daemonises; the pid file appears once the port is bound.
	"$SSHD" -f "$DIR/sshd_config" -E "$DIR/sshd.log" ||
		die "sshd did not start; $DIR/sshd.log: $(tail -3 "$DIR/sshd.log" 2>/dev/null)"
	for _ in $(seq 100); do
		alive && break
		sleep 0.02
	done
	alive || die "sshd did not listen on 127.0.0.1:$PORT within 2 s; $DIR/sshd.log: $(tail -3 "$DIR/sshd.log" 2>/dev/null)"
	verify=1
fi
if [ -n "$verify" ]; then
	# A key login proves the whole chain (keys, modes, shell).
	if ! out=$(ssh -F "$DIR/ssh_config" -o BatchMode=yes there true 2>&1); then
		die "sshd runs (pid $(cat "$DIR/sshd.pid")) but a key login failed: $out; $DIR/sshd.log: $(tail -3 "$DIR/sshd.log")"
	fi
	say "sshd pid $(cat "$DIR/sshd.pid") on 127.0.0.1:$PORT, user $ME, log $DIR/sshd.log"
fi

cat <<EOF
export SUBDASH_SSHD_DIR="$DIR"
export SUBDASH_SSH_COMMAND="ssh -F $DIR/ssh_config"
export SUBDASH_SSH_HOST=there
EOF

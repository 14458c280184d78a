#!/usr/bin/env bash
# judges-up.sh [DIR]: what the tests that check subdash against suites it
# did not write need (docs/codebase.md, "The judges"):
#   - Debian's unicode-data (/usr/share/unicode: emoji-test.txt,
#     GraphemeBreakTest.txt) for termtext's TestUnicodeCorpora;
#   - the MCP conformance suite and Node.js 22, which it needs, both
#     pinned by .ci/conformance/package-lock.json, installed with npm ci
#     into DIR for mcpserver's TestMCPConformance. After that the suite
#     runs offline.
# Installs with apt-get what is missing (unicode-data; npm where there is
# none: Debian's npm then installs Node.js 22 from the npm registry as a
# package). Idempotent: with everything in place it only prints the
# export (0.1 s); a first run takes about 15-30 s.
#
# DIR (or $SUBDASH_CONFORMANCE_DIR) defaults to
# $HOME/.cache/subdash-conformance. Prints, on stdout, the line to eval:
#   export SUBDASH_CONFORMANCE_DIR=DIR
# Everything else goes to stderr. Exit 0: everything is in place; 1: it
# could not be installed (the reason on stderr).
set -euo pipefail
cd "$(dirname "$0")/.."

DIR=${1:-${SUBDASH_CONFORMANCE_DIR:-${HOME:?HOME is unset: give DIR}/.cache/subdash-conformance}}
LOCK=.ci/conformance/package-lock.json
NODE_VERSION=v22.23.3 # as $LOCK pins it
say() { printf 'judges-up: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

apt_install() {
	local SUDO=""
	if [ "$(id -u)" -ne 0 ]; then
		sudo -n true 2>/dev/null || die "$* missing and $(id -un) cannot install it (not root, no password-less sudo): apt-get install $* as root first"
		SUDO="sudo -n"
	fi
	export DEBIAN_FRONTEND=noninteractive
	say "installing $* with apt-get"
	if ! apt-cache policy "$@" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
		$SUDO apt-get update -qq
	fi
	$SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# 1. Unicode's test files.
if [ ! -f /usr/share/unicode/emoji/emoji-test.txt ] || [ ! -f /usr/share/unicode/auxiliary/GraphemeBreakTest.txt ]; then
	apt_install unicode-data
fi

# 2. The conformance suite and its Node.js, as the lock file pins them.
node="$DIR/node_modules/.bin/node"
if ! cmp -s "$LOCK" "$DIR/package-lock.json" || [ ! -x "$node" ] || [ "$("$node" --version 2>/dev/null)" != "$NODE_VERSION" ]; then
	command -v npm >/dev/null 2>&1 || apt_install npm
	mkdir -p "$DIR"
	cp .ci/conformance/package.json "$LOCK" "$DIR/"
	say "installing the MCP conformance suite and Node.js $NODE_VERSION into $DIR with npm ci"
	(cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error >&2) || die "npm ci in $DIR failed"
	[ "$("$node" --version 2>/dev/null)" = "$NODE_VERSION" ] || die "npm ci ran, but $node is not Node.js $NODE_VERSION"
fi
printf 'export SUBDASH_CONFORMANCE_DIR=%q\n' "$DIR"

#!/bin/bash
# Builds localhost/agentclis:local, an image with the real claude and codex CLIs of
# $AGENTCLI_ROOT (../shared/tools/agent-clis/install.sh), and imports it into the
# containerd of ../shared/tools/k8s (up.sh first). The end-to-end tests of claude's
# questions and codex's app-server in pods use it: SUBDASH_KUBE_TEST_CLI_IMAGE=localhost/agentclis:local.
# busybox (the runner's wrapper needs /bin/sh, tr, grep), bash for claude's Bash tool, this
# machine's glibc for claude's native binary; codex is static. About 800 MB.
set -euo pipefail
: "${AGENTCLI_ROOT:?set AGENTCLI_ROOT to the folder holding the installed CLIs}"
I=/tmp/k8s-img R=/tmp/k8s-img/cli-root TAG=localhost/agentclis:local
CLAUDE=$(readlink -f "$AGENTCLI_ROOT/claude/node_modules/.bin/claude")
CODEX=$AGENTCLI_ROOT/codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl
rm -rf "$R"; mkdir -p "$R"/{bin,tmp,etc,proc,sys,dev,root,opt,lib64,lib/x86_64-linux-gnu,work}; chmod 1777 "$R/tmp"
cp /bin/busybox "$R/bin/"; for a in $("$R/bin/busybox" --list); do [ -e "$R/bin/$a" ] || ln -s busybox "$R/bin/$a"; done
cp /bin/bash "$R/bin/bash"
for f in $( (ldd "$CLAUDE"; ldd /bin/bash) | awk '/=>/ {print $3} /ld-linux/ {print $1}' | sort -u); do
  mkdir -p "$R$(dirname "$f")"; cp -L "$f" "$R$f"; done
mkdir -p "$R/opt/claude" && cp "$CLAUDE" "$R/opt/claude/claude" && ln -s /opt/claude/claude "$R/bin/claude"
cp -a "$CODEX" "$R/opt/codex" && ln -s /opt/codex/bin/codex "$R/bin/codex"
echo root:x:0:0:root:/root:/bin/bash > "$R/etc/passwd"; echo root:x:0: > "$R/etc/group"
w=$(mktemp -d $I/work.XXXX); tar -C "$R" --numeric-owner --owner=0 --group=0 -cf "$w/layer.tar" .
d=$(sha256sum "$w/layer.tar" | cut -d' ' -f1)
echo "{\"architecture\":\"amd64\",\"os\":\"linux\",\"config\":{\"Env\":[\"PATH=/bin\",\"HOME=/root\"],\"WorkingDir\":\"/work\",\"Cmd\":[\"/bin/sh\"]},\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"sha256:$d\"]}}" > "$w/c.json"
c=$(sha256sum "$w/c.json" | cut -d' ' -f1); mv "$w/c.json" "$w/$c.json"
echo "[{\"Config\":\"$c.json\",\"RepoTags\":[\"$TAG\"],\"Layers\":[\"layer.tar\"]}]" > "$w/manifest.json"
tar -C "$w" -cf $I/agentclis.tar manifest.json "$c.json" layer.tar; rm -rf "$w" "$R"
ctr -a /tmp/k8s-containerd/containerd.sock -n k8s.io images import $I/agentclis.tar >/dev/null
rm -f $I/agentclis.tar
echo "$TAG imported"

// Package local is the local runner (SPEC §4, --runner local, the
// default): every submission is a `/bin/sh -c` child of the host in a
// session and process group of its own (process.go) and, where a cgroup v2
// hierarchy is writable, in a cgroup of its own under the host's
// (cgroup.go), its stdout and stderr read from pipes with read(2) and
// poll(2), a flood in batches (pipes.go), its end found and its processes
// ended by signals to the group, to its cgroup and to the processes that
// left the group (escapees.go), what is known of other processes read
// from /proc (procfs.go), and the orphan sweep that ends what a host
// killed without cleaning up left running (orphans.go; its cgroups: the
// runner's Sweep).
//
// It implements the interfaces of package runner and imports no other
// subdash package but the engine's internal/fdlimit and internal/cgroup.
// The engine (package supervisor) registers it, runs the orphan sweep at
// start and asks /proc and the cgroups through it (CheckNesting, log
// retention); the dashboard uses Descendants to end a pager.
package local

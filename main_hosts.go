package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/subdash/subdash/internal/config"
	"github.com/subdash/subdash/supervisor"
	"github.com/subdash/subdash/supervisor/control/client"
	"github.com/subdash/subdash/supervisor/sshlink"
	"github.com/subdash/subdash/ui"
)

// Several hosts in one dashboard (SPEC §9 "Several hosts"): `subdash
// attach` given more than one host (--dir, --socket, ssh:// targets, the
// config file's [[hosts]] as @NAME or @all), each a viewer's event stream
// of its own in one table.

// viewTarget is one host `subdash attach` was given.
type viewTarget struct {
	name     string // the [[hosts]] name; "" to make one (nameTargets)
	given    string // as given, without ?read-only: a folder, a socket, ssh://…
	dir      string // a folder here (--dir, or a [[hosts]] folder)
	socket   string // a socket here (--socket)
	ssh      *sshlink.Target
	readOnly bool
}

// readOnlySuffix is what, after a target, makes its host read-only.
const readOnlySuffix = "read-only"

// cutReadOnly returns s without a trailing ?read-only (or &read-only
// after other options of an ssh:// target), and whether it had one.
func cutReadOnly(s string) (string, bool) {
	for _, sep := range []string{"?", "&"} {
		if t, ok := strings.CutSuffix(s, sep+readOnlySuffix); ok {
			return t, true
		}
	}
	return s, false
}

// viewTargets returns the hosts of `subdash attach`: each --dir, each
// --socket, then each argument (an ssh:// target, @NAME of the config
// file's [[hosts]], or @all of them), each with ?read-only honoured, and
// --read-only making every one read-only. None given: none (the viewer
// attaches to the current folder's host, as before). Errors (usage): an
// argument that is neither, an unknown @NAME, @all without [[hosts]], a
// bad ssh:// target, a folder that is not one.
func viewTargets(af *attachFlags, args []string, hosts []config.Host, file string) ([]viewTarget, error) {
	var out []viewTarget
	for _, d := range af.dirs {
		d, ro := cutReadOnly(d)
		abs, err := filepath.Abs(strings.TrimSpace(d))
		if err != nil {
			return nil, fmt.Errorf("--dir %s: %v", d, err)
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return nil, usageError{fmt.Errorf("--dir %s is not a directory: give the folder whose host to attach to", abs)}
		}
		out = append(out, viewTarget{given: d, dir: abs, readOnly: ro})
	}
	for _, s := range af.sockets {
		s, ro := cutReadOnly(s)
		out = append(out, viewTarget{given: s, socket: s, readOnly: ro})
	}
	for _, a := range args {
		a, ro := cutReadOnly(strings.TrimSpace(a))
		switch name, named := strings.CutPrefix(a, "@"); {
		case named && name == "all":
			if len(hosts) == 0 {
				return nil, usageError{fmt.Errorf("@all: the config file (%s) has no [[hosts]]; name each host there (name, target, read_only), or give --dir, --socket or ssh:// targets", file)}
			}
			for _, h := range hosts {
				t, err := hostTarget(h)
				if err != nil {
					return nil, err
				}
				t.readOnly = t.readOnly || ro
				out = append(out, t)
			}
		case named:
			i := slicesIndex(hosts, name)
			if i < 0 {
				return nil, usageError{fmt.Errorf("@%s: no [[hosts]] named %q in %s (%s)", name, name, file, hostNames(hosts))}
			}
			t, err := hostTarget(hosts[i])
			if err != nil {
				return nil, err
			}
			t.readOnly = t.readOnly || ro
			out = append(out, t)
		default:
			st, err := sshlink.ParseTarget(a)
			if err != nil {
				return nil, usageError{err}
			}
			out = append(out, viewTarget{given: a, ssh: &st, readOnly: ro})
		}
	}
	for i := range out {
		out[i].readOnly = out[i].readOnly || af.readOnly
	}
	return out, nil
}

// slicesIndex is the index of the [[hosts]] named name, -1 when none.
func slicesIndex(hosts []config.Host, name string) int {
	for i, h := range hosts {
		if h.Name == name {
			return i
		}
	}
	return -1
}

// hostNames says which [[hosts]] there are.
func hostNames(hosts []config.Host) string {
	if len(hosts) == 0 {
		return "it has no [[hosts]]"
	}
	names := make([]string, len(hosts))
	for i, h := range hosts {
		names[i] = "@" + h.Name
	}
	return "it has " + strings.Join(names, ", ")
}

// hostTarget is the target of a [[hosts]] table (checked by the config
// file's reader: an ssh:// target or an absolute folder).
func hostTarget(h config.Host) (viewTarget, error) {
	t := viewTarget{name: h.Name, given: h.Target, readOnly: h.ReadOnly}
	if sshlink.IsTarget(h.Target) {
		st, err := sshlink.ParseTarget(h.Target)
		if err != nil {
			return t, usageError{fmt.Errorf("[[hosts]] %s: %v", h.Name, err)}
		}
		t.ssh = &st
		return t, nil
	}
	t.dir = h.Target
	return t, nil
}

// nameTargets gives each target without a [[hosts]] name one: its
// folder's last element (the socket's file name, without .sock), then,
// where two would have the same, the machine after an @ and a number
// after that.
func nameTargets(ts []viewTarget) {
	taken := map[string]bool{}
	for _, t := range ts {
		if t.name != "" {
			taken[t.name] = true
		}
	}
	for i := range ts {
		t := &ts[i]
		if t.name != "" {
			continue
		}
		base, machine := "", "here"
		switch {
		case t.ssh != nil && t.ssh.Dir != "":
			base, machine = filepath.Base(t.ssh.Dir), t.ssh.Host
		case t.ssh != nil:
			base, machine = strings.TrimSuffix(filepath.Base(t.ssh.Socket), ".sock"), t.ssh.Host
		case t.dir != "":
			base = filepath.Base(t.dir)
		default:
			base = strings.TrimSuffix(filepath.Base(t.socket), ".sock")
		}
		name := base
		if taken[name] {
			name = base + "@" + machine
		}
		for n := 2; taken[name]; n++ {
			name = base + "@" + machine + "-" + strconv.Itoa(n)
		}
		t.name, taken[name] = name, true
	}
}

// attachHosts is `subdash attach` of several hosts: the ssh:// ones are
// linked first, one after the other, so that ssh may prompt on the
// terminal; then every host is attached at once. A host that fails
// starts lost and is tried again (the viewer says why on its row); when
// none answers, the error names each.
func attachHosts(tm terminal, ts []viewTarget, spawns []string, notify ui.Notify, lk look) int {
	nameTargets(ts)
	targets := make([]client.HostTarget, len(ts))
	var carriers []*sshlink.Carrier
	defer func() {
		for _, c := range carriers {
			c.Close()
		}
	}()
	for i, t := range ts {
		targets[i] = client.HostTarget{Name: t.name, Target: t.given, ReadOnly: t.readOnly}
		if t.ssh == nil {
			sock, dir := t.socket, t.dir
			if sock == "" {
				s, _, err := viewerSocket(supervisor.Options{Dir: dir})
				if err != nil {
					return failed(fmt.Errorf("%s: %w", t.name, err))
				}
				sock = s
			}
			targets[i].Dial = func(context.Context) (*client.Client, client.Relinker, func(), error) {
				return client.NewClient(sock, dir), nil, nil, nil
			}
			continue
		}
		st := *t.ssh
		targets[i].Where, targets[i].Target = st.Name(), st.Name()
		first, ferr := connectTarget(tm.sig.Context(), st, linkOptions(false))
		if ferr == nil {
			carriers = append(carriers, first)
		}
		targets[i].Dial = func(ctx context.Context) (*client.Client, client.Relinker, func(), error) {
			c := first
			if c == nil { // a later try: a new link, without prompts
				if ferr != nil {
					err := ferr
					ferr = nil
					return nil, nil, nil, err
				}
				var err error
				if c, err = sshlink.Connect(ctx, st, linkOptions(true)); err != nil {
					return nil, nil, nil, err
				}
			}
			first = nil
			cl := client.NewClientVia(st.Name(), c.ForViewer().DialContext).WithHostInfo(c.Link().Info())
			return cl, c, c.Close, nil
		}
	}
	ctx, cancel := context.WithTimeout(tm.sig.Context(), client.CallTimeout+client.CallTimeout)
	h, err := client.AttachHosts(ctx, targets)
	cancel()
	if err != nil {
		return tm.sig.Status(failed(fmt.Errorf("no host answered: %w", err)))
	}
	carriers = nil // the viewer's now: Detach ends them
	return runViewer(tm, h, hostsSocket(h), spawns, notify, lk)
}

// hostsSocket names each host's control socket for the help overlay.
func hostsSocket(h *client.Hosts) string {
	var parts []string
	for _, s := range h.Hosts() {
		where := s.Socket
		if where == "" {
			where = "(not attached yet)"
		}
		if s.Where != "" {
			where = fmt.Sprintf("%s (socket %s there)", s.Where, where)
		}
		parts = append(parts, s.Name+": "+where)
	}
	return strings.Join(parts, "; ")
}

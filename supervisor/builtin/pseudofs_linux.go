//go:build linux

package builtin

import "golang.org/x/sys/unix"

// pseudoFilesystems names, by the f_type that statfs(2) reports, the file
// systems whose files are not data: kernel state made up on each read,
// device and terminal nodes, control files. Their "regular" files can block
// forever (/proc/kmsg), never end or change the system when read, so walks
// do not enter them. The numbers are those of statfs(2) and
// <linux/magic.h>; configfs, fusectl and mqueue are missing from x/sys/unix
// and come from the kernel sources (fs/configfs/mount.c,
// fs/fuse/control.c, ipc/mqueue.c). devtmpfs is not here: it reports
// TMPFS_MAGIC (or RAMFS_MAGIC), like /tmp, so statfs cannot tell it apart;
// its device nodes are skipped anyway, as no walk reads anything but
// regular files.
var pseudoFilesystems = map[uint32]string{
	unix.PROC_SUPER_MAGIC:    "proc",
	unix.SYSFS_MAGIC:         "sysfs",
	unix.DEVPTS_SUPER_MAGIC:  "devpts",
	unix.DEBUGFS_MAGIC:       "debugfs",
	unix.TRACEFS_MAGIC:       "tracefs",
	unix.CGROUP_SUPER_MAGIC:  "cgroup",
	unix.CGROUP2_SUPER_MAGIC: "cgroup2",
	unix.SECURITYFS_MAGIC:    "securityfs",
	unix.BPF_FS_MAGIC:        "bpf",
	0x62656570:               "configfs", // CONFIGFS_MAGIC
	0x65735543:               "fusectl",  // FUSE_CTL_SUPER_MAGIC
	unix.PSTOREFS_MAGIC:      "pstore",
	unix.EFIVARFS_MAGIC:      "efivarfs",
	0x19800202:               "mqueue", // MQUEUE_MAGIC
	unix.HUGETLBFS_MAGIC:     "hugetlbfs",
}

// pseudoFilesystem returns the name of the pseudo file system (one of
// pseudoFilesystems) holding the directory at absolute path abs, or "" for
// any other file system and when statfs fails (reading the directory will
// then say what is wrong).
func pseudoFilesystem(abs string) string {
	var st unix.Statfs_t
	if err := unix.Statfs(abs, &st); err != nil {
		return ""
	}
	// f_type is 32 bits wide in meaning but signed on some architectures.
	return pseudoFilesystems[uint32(st.Type)]
}

// mount.go: "mount", as Kubo 0.42's core/commands/mount_unix.go: the
// running daemon mounts /ipfs and /ipns read-only with FUSE (package
// mount, through Env.Mount). cairn mounts no MFS.

package commands

import (
	"errors"
	"fmt"

	"cairn/node"
	"cairn/rpc"
)

// MountsOutput is Kubo's config.Mounts as mount answers it.
type MountsOutput struct {
	IPFS, IPNS, MFS string
}

var mountCommands = []*rpc.Command{{
	Path:     "mount",
	Synopsis: "Mounts IPFS to the filesystem (read-only).",
	Help: `Mount IPFS at a read-only mountpoint on the OS (default: /ipfs, /ipns).
All IPFS objects will be accessible under that directory. Note that the
root will not be listable, as it is virtual. Access known paths directly.

You may have to create /ipfs and /ipns before using 'cairn mount':

> sudo mkdir /ipfs /ipns
> sudo chown $(whoami) /ipfs /ipns
> cairn daemon &
> cairn mount

The mount points come from Mounts.IPFS and Mounts.IPNS unless given;
Mounts.FuseAllowOther lets other users read them. FUSE needs /dev/fuse and,
for a user other than root, fusermount (package fuse3). /ipns names are
symlinks into /ipfs, resolved as 'cairn name resolve' does. The daemon
unmounts them when it stops. cairn mounts no MFS (--mfs-path is refused).`,
	Options: []rpc.Option{
		{Names: []string{"ipfs-path", "f"}, Type: rpc.String, Help: "The path where IPFS should be mounted."},
		{Names: []string{"ipns-path", "n"}, Type: rpc.String, Help: "The path where IPNS should be mounted."},
		{Names: []string{"mfs-path", "m"}, Type: rpc.String, Help: "The path where MFS should be mounted (not supported by cairn)."},
	},
	NoLocal: true,
	Output:  rpc.OutSingle,
	Run:     runMount,
	Type:    func() any { return &MountsOutput{} },
	Text: func(t *rpc.TextEnv, v any) error {
		m := v.(*MountsOutput)
		_, err := fmt.Fprintf(t.Out, "IPFS mounted at: %s\nIPNS mounted at: %s\n", m.IPFS, m.IPNS)
		return err
	},
}}

func runMount(r *rpc.Request, e rpc.Emitter) error {
	if r.Env == nil || r.Env.Mount == nil || r.Node.Net == nil {
		return node.ErrOffline
	}
	if r.String("mfs-path") != "" {
		return errors.New("mounting MFS is not supported by cairn (mount /ipfs and /ipns only)")
	}
	ipfs, ipns, err := MountPoints(r, "ipfs-path", "ipns-path")
	if err != nil {
		return err
	}
	if err := r.Env.Mount(ipfs, ipns); err != nil {
		return err
	}
	return e.Emit(&MountsOutput{IPFS: ipfs, IPNS: ipns})
}

// MountPoints are where r mounts /ipfs and /ipns: the options named
// ipfsOpt and ipnsOpt when given (mount's ipfs-path, the daemon's
// mount-ipfs), else Mounts.IPFS and Mounts.IPNS.
func MountPoints(r *rpc.Request, ipfsOpt, ipnsOpt string) (ipfs, ipns string, err error) {
	cfg, err := r.Node.ConfigFile().Mounts()
	if err != nil {
		return "", "", err
	}
	ipfs, ipns = cfg.IPFS, cfg.IPNS
	if r.IsSet(ipfsOpt) {
		ipfs = r.String(ipfsOpt)
	}
	if r.IsSet(ipnsOpt) {
		ipns = r.String(ipnsOpt)
	}
	return ipfs, ipns, nil
}

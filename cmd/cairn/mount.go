// mount.go: the daemon's FUSE mounts (daemon --mount, the mount command):
// one set at a time, unmounted when the daemon stops.

package main

import (
	"context"
	"fmt"
	"io"
	"sync"

	"cairn/commands"
	"cairn/mount"
	"cairn/node"
	"cairn/rpc"
)

type mounter struct {
	n  *node.Node
	mu sync.Mutex
	m  *mount.Mounts
}

// mount replaces the current mounts with /ipfs at ipfs and /ipns at ipns.
func (mt *mounter) mount(ipfs, ipns string) error {
	cfg, err := mt.n.ConfigFile().Mounts()
	if err != nil {
		return err
	}
	mt.mu.Lock()
	defer mt.mu.Unlock()
	mt.unmountLocked()
	m, err := mount.Start(mt.n, mount.Options{IPFS: ipfs, IPNS: ipns, AllowOther: cfg.AllowOther, Resolver: mt.resolve})
	if err != nil {
		return err
	}
	mt.m = m
	log.Infof("mounted /ipfs at %s, /ipns at %s", ipfs, ipns)
	return nil
}

// resolve is /ipns's resolver: the node's (IPNS records and DNSLink).
func (mt *mounter) resolve(ctx context.Context, name string) (string, error) {
	p, err := mt.n.Names().Resolve(ctx, name, node.ResolveOptions{})
	if err != nil {
		return "", err
	}
	return p.String(), nil
}

func (mt *mounter) close() {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	mt.unmountLocked()
}

func (mt *mounter) unmountLocked() {
	if mt.m == nil {
		return
	}
	if err := mt.m.Close(); err != nil {
		log.Errorf("%v", err)
	}
	mt.m = nil
}

// mountAtStart mounts what daemon --mount asks for (--mount-ipfs and
// --mount-ipns, else Mounts.IPFS and Mounts.IPNS) and prints where, as
// Kubo's daemon.
func (mt *mounter) mountAtStart(req *rpc.Request, stdout io.Writer) error {
	r := *req
	r.Node = mt.n
	ipfs, ipns, err := commands.MountPoints(&r, "mount-ipfs", "mount-ipns")
	if err != nil {
		return err
	}
	if err := mt.mount(ipfs, ipns); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "IPFS mounted at: %s\nIPNS mounted at: %s\n", ipfs, ipns)
	return nil
}

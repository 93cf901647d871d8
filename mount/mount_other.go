//go:build !linux

// mount_other.go: FUSE mounts are built for Linux only.

package mount

import (
	"errors"

	"cairn/node"
)

// ErrUnsupported is the answer of Start off Linux.
var ErrUnsupported = errors.New("FUSE mounts are supported on Linux only")

// Options say where to mount and how.
type Options struct {
	IPFS, IPNS string
	AllowOther bool
	Resolver   Resolver
}

// Mounts are the active mounts of a Start.
type Mounts struct{}

// Check always fails off Linux.
func Check(key, dir string) error { return ErrUnsupported }

// Start always fails off Linux.
func Start(n *node.Node, o Options) (*Mounts, error) { return nil, ErrUnsupported }

// Dirs are the mount points.
func (m *Mounts) Dirs() []string { return nil }

// Close does nothing.
func (m *Mounts) Close() error { return nil }

// read.go: streaming a UnixFS file from the store.
//
// Each block is read in its own short read transaction; leaf bytes are
// written to the destination from the store's read buffer (storage reads
// large values with pread, see "Reads" in storage/doc.go). Only the links
// of inner nodes (a few KiB) are copied out.

package node

import (
	"cairn/node/unixfs"
	"context"
	"errors"
	"fmt"
	"io"

	ft "github.com/ipfs/boxo/ipld/unixfs"
	"github.com/ipfs/go-cid"
)

// FileSize returns the byte length of the UnixFS file c.
func (u *UnixFS) FileSize(ctx context.Context, c cid.Cid) (uint64, error) {
	n := u.n
	var size uint64
	err := n.view(ctx, c, func(b []byte) error {
		switch c.Type() {
		case cid.Raw:
			size = uint64(len(b))
			return nil
		case cid.DagProtobuf:
			f, err := unixfs.Decode(b)
			if err != nil {
				return err
			}
			if err := fileType(f, true); err != nil {
				return err
			}
			size = f.Size()
			return nil
		}
		return fmt.Errorf("%w: codec 0x%x", ErrNotFile, c.Type())
	})
	return size, err
}

// fileType accepts the nodes whose bytes a read gives: files and, at the
// top of a read (root), a symlink, whose bytes are its target as in Kubo
// (boxo's files.Symlink is a File: cat and files/read answer the target).
func fileType(f *unixfs.File, root bool) error {
	switch f.Type {
	case int64(ft.TFile), int64(ft.TRaw):
		return nil
	case int64(ft.TDirectory), int64(ft.THAMTShard):
		return ErrIsDir
	case int64(ft.TSymlink):
		if root {
			return nil
		}
		return errors.New("symlink inside a file")
	}
	return ErrNotFile
}

// WriteFile writes bytes [offset, offset+length) of the UnixFS file c to
// w (length < 0: to the end). Blocks missing from the store give an
// ipld.ErrNotFound naming the block.
func (u *UnixFS) WriteFile(ctx context.Context, c cid.Cid, offset, length int64, w io.Writer) error {
	n := u.n
	if length == 0 {
		return nil
	}
	end := int64(-1)
	if length > 0 {
		end = offset + length
	}
	_, err := n.writeRange(ctx, c, 0, offset, end, w, true)
	return err
}

// writeRange writes the part of node c (whose content starts at byte
// base of the file) that falls in [from, to) (to < 0: no end). It returns
// the node's content length.
func (n *Node) writeRange(ctx context.Context, c cid.Cid, base, from, to int64, w io.Writer, root bool) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var links []unixfs.Link
	var sizes []uint64
	var total int64
	var dataLen int64
	err := n.view(ctx, c, func(b []byte) error {
		var data []byte
		switch c.Type() {
		case cid.Raw:
			data = b
			total = int64(len(b))
		case cid.DagProtobuf:
			f, err := unixfs.Decode(b)
			if err != nil {
				return fmt.Errorf("block %s: %w", c, err)
			}
			if err := fileType(f, root); err != nil {
				if root {
					return err
				}
				return fmt.Errorf("block %s: %w", c, err)
			}
			data = f.Data
			total = int64(f.Size())
			links, sizes = f.Links, f.Blocksizes
		default:
			return fmt.Errorf("%w: codec 0x%x", ErrNotFile, c.Type())
		}
		dataLen = int64(len(data))
		return writeSlice(w, data, base, from, to)
	})
	if err != nil {
		return 0, err
	}
	if len(links) > 0 && len(links) != len(sizes) {
		return 0, fmt.Errorf("block %s: %d links but %d block sizes", c, len(links), len(sizes))
	}
	pos := base + dataLen
	for i, l := range links {
		sz := int64(sizes[i])
		if to >= 0 && pos >= to {
			break
		}
		if pos+sz > from {
			if _, err := n.writeRange(ctx, l.Cid, pos, from, to, w, false); err != nil {
				return 0, err
			}
		}
		pos += sz
	}
	return total, nil
}

// writeSlice writes the part of data (file bytes starting at base) inside
// [from, to).
func writeSlice(w io.Writer, data []byte, base, from, to int64) error {
	lo := from - base
	if lo < 0 {
		lo = 0
	}
	hi := int64(len(data))
	if to >= 0 && to-base < hi {
		hi = to - base
	}
	if lo >= hi {
		return nil
	}
	_, err := w.Write(data[lo:hi])
	return err
}

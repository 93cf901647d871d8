// pbdecode.go: a dag-pb and UnixFS decoder for the read paths, which
// aliases the block's bytes instead of copying them (boxo's decoders copy
// every block's data onto the heap).

package node

import (
	"errors"
	"fmt"

	"github.com/ipfs/go-cid"
	"google.golang.org/protobuf/encoding/protowire"
)

// pbLink is one link of a dag-pb node.
type pbLink struct {
	c     cid.Cid
	name  string
	tsize uint64
}

// pbFile is the part of a dag-pb UnixFS node the reader needs.
type pbFile struct {
	typ      int64 // unixfs type (-1: no unixfs data)
	data     []byte
	filesize uint64
	hasSize  bool
	blocks   []uint64
	links    []pbLink
}

// decodePB parses a dag-pb block and its UnixFS data without copying data
// (the returned slice aliases b). Links are copied.
func decodePB(b []byte) (*pbFile, error) {
	f := &pbFile{typ: -1}
	var unixfs []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, errors.New("dag-pb: bad tag")
		}
		b = b[n:]
		if typ != protowire.BytesType {
			return nil, errors.New("dag-pb: unexpected wire type")
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return nil, errors.New("dag-pb: bad field")
		}
		b = b[n:]
		switch num {
		case 1:
			unixfs = v
		case 2:
			l, err := decodeLink(v)
			if err != nil {
				return nil, err
			}
			f.links = append(f.links, l)
		}
	}
	if unixfs == nil {
		return f, nil
	}
	for len(unixfs) > 0 {
		num, typ, n := protowire.ConsumeTag(unixfs)
		if n < 0 {
			return nil, errors.New("unixfs: bad tag")
		}
		unixfs = unixfs[n:]
		switch typ {
		case protowire.VarintType:
			v, n := protowire.ConsumeVarint(unixfs)
			if n < 0 {
				return nil, errors.New("unixfs: bad varint")
			}
			unixfs = unixfs[n:]
			switch num {
			case 1:
				f.typ = int64(v)
			case 3:
				f.filesize, f.hasSize = v, true
			case 4:
				f.blocks = append(f.blocks, v)
			}
		case protowire.BytesType:
			v, n := protowire.ConsumeBytes(unixfs)
			if n < 0 {
				return nil, errors.New("unixfs: bad field")
			}
			unixfs = unixfs[n:]
			switch num {
			case 2:
				f.data = v
			case 4: // packed blocksizes
				for len(v) > 0 {
					x, m := protowire.ConsumeVarint(v)
					if m < 0 {
						return nil, errors.New("unixfs: bad blocksizes")
					}
					f.blocks = append(f.blocks, x)
					v = v[m:]
				}
			}
		default:
			n := protowire.ConsumeFieldValue(num, typ, unixfs)
			if n < 0 {
				return nil, errors.New("unixfs: bad field")
			}
			unixfs = unixfs[n:]
		}
	}
	return f, nil
}

func decodeLink(b []byte) (pbLink, error) {
	var l pbLink
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return l, errors.New("dag-pb link: bad tag")
		}
		b = b[n:]
		switch {
		case typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return l, errors.New("dag-pb link: bad field")
			}
			b = b[n:]
			switch num {
			case 1:
				_, c, err := cid.CidFromBytes(v)
				if err != nil {
					return l, fmt.Errorf("dag-pb link: %w", err)
				}
				l.c = c
			case 2:
				l.name = string(v)
			}
		case typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return l, errors.New("dag-pb link: bad varint")
			}
			b = b[n:]
			if num == 3 {
				l.tsize = v
			}
		default:
			return l, errors.New("dag-pb link: unexpected wire type")
		}
	}
	return l, nil
}

// size returns the byte length of a file node's content: its Filesize,
// else the length of its inline data.
func (f *pbFile) size() uint64 {
	if f.hasSize {
		return f.filesize
	}
	return uint64(len(f.data))
}

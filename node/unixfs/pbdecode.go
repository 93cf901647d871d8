// pbdecode.go: a dag-pb and UnixFS decoder for the read paths, which
// aliases the block's bytes instead of copying them (boxo's decoders copy
// every block's data onto the heap).

package unixfs

import (
	"errors"
	"fmt"

	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
	"google.golang.org/protobuf/encoding/protowire"
)

// Link is one link of a dag-pb node.
type Link struct {
	Cid   cid.Cid
	Name  string
	Tsize uint64
}

// File is the part of a dag-pb UnixFS node the reader needs.
type File struct {
	Type       int64 // unixfs type (-1: no unixfs data)
	Data       []byte
	Filesize   uint64
	HasSize    bool
	Blocksizes []uint64
	Links      []Link
}

// Decode parses a dag-pb block and its UnixFS data without copying data
// (the returned slice aliases b). Links are copied.
func Decode(b []byte) (*File, error) {
	f := &File{Type: -1}
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
			l, err := DecodeLink(v)
			if err != nil {
				return nil, err
			}
			f.Links = append(f.Links, l)
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
				f.Type = int64(v)
			case 3:
				f.Filesize, f.HasSize = v, true
			case 4:
				f.Blocksizes = append(f.Blocksizes, v)
			}
		case protowire.BytesType:
			v, n := protowire.ConsumeBytes(unixfs)
			if n < 0 {
				return nil, errors.New("unixfs: bad field")
			}
			unixfs = unixfs[n:]
			switch num {
			case 2:
				f.Data = v
			case 4: // packed blocksizes
				for len(v) > 0 {
					x, m := protowire.ConsumeVarint(v)
					if m < 0 {
						return nil, errors.New("unixfs: bad blocksizes")
					}
					f.Blocksizes = append(f.Blocksizes, x)
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

// DecodeLink parses one dag-pb link (PBLink): its CID, name and Tsize.
func DecodeLink(b []byte) (Link, error) {
	var l Link
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
				l.Cid = c
			case 2:
				l.Name = string(v)
			}
		case typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return l, errors.New("dag-pb link: bad varint")
			}
			b = b[n:]
			if num == 3 {
				l.Tsize = v
			}
		default:
			return l, errors.New("dag-pb link: unexpected wire type")
		}
	}
	return l, nil
}

// Size returns the byte length of a file node's content: its Filesize,
// else the length of its inline data.
func (f *File) Size() uint64 {
	if f.HasSize {
		return f.Filesize
	}
	return uint64(len(f.Data))
}

// Scan reads the outer dag-pb fields of b: the Data bytes (aliasing b)
// and, with wantLinks, copies of the links.
func Scan(b []byte, wantLinks bool) ([]byte, []*ipld.Link, error) {
	var data []byte
	var links []*ipld.Link
	for len(b) > 0 {
		num, typ, k := protowire.ConsumeTag(b)
		if k < 0 || typ != protowire.BytesType {
			return nil, nil, errors.New("dag-pb: malformed node")
		}
		b = b[k:]
		v, k := protowire.ConsumeBytes(b)
		if k < 0 {
			return nil, nil, errors.New("dag-pb: malformed node")
		}
		b = b[k:]
		switch num {
		case 1:
			data = v
		case 2:
			if !wantLinks {
				continue
			}
			l, err := DecodeLink(v)
			if err != nil {
				return nil, nil, err
			}
			if !l.Cid.Defined() {
				return nil, nil, fmt.Errorf("dag-pb link: missing Hash")
			}
			links = append(links, &ipld.Link{Name: l.Name, Size: l.Tsize, Cid: l.Cid})
		}
	}
	return data, links, nil
}

// LinkCids reads only the link CIDs of a dag-pb block (one small
// allocation per link: walks of nodes with many links stay lean).
func LinkCids(b []byte) ([]cid.Cid, error) {
	count := 0
	for rest := b; len(rest) > 0; {
		num, typ, k := protowire.ConsumeTag(rest)
		if k < 0 {
			return nil, errors.New("dag-pb: malformed node")
		}
		rest = rest[k:]
		k = protowire.ConsumeFieldValue(num, typ, rest)
		if k < 0 {
			return nil, errors.New("dag-pb: malformed node")
		}
		rest = rest[k:]
		if num == 2 {
			count++
		}
	}
	out := make([]cid.Cid, 0, count)
	for len(b) > 0 {
		num, typ, k := protowire.ConsumeTag(b)
		if k < 0 || typ != protowire.BytesType {
			return nil, errors.New("dag-pb: malformed node")
		}
		b = b[k:]
		v, k := protowire.ConsumeBytes(b)
		if k < 0 {
			return nil, errors.New("dag-pb: malformed node")
		}
		b = b[k:]
		if num != 2 {
			continue
		}
		var c cid.Cid
		for len(v) > 0 {
			lnum, ltyp, k := protowire.ConsumeTag(v)
			if k < 0 {
				return nil, errors.New("dag-pb link: bad tag")
			}
			v = v[k:]
			k = protowire.ConsumeFieldValue(lnum, ltyp, v)
			if k < 0 {
				return nil, errors.New("dag-pb link: bad field")
			}
			if lnum == 1 && ltyp == protowire.BytesType {
				h, _ := protowire.ConsumeBytes(v)
				_, lc, err := cid.CidFromBytes(h)
				if err != nil {
					return nil, fmt.Errorf("dag-pb link: %w", err)
				}
				c = lc
			}
			v = v[k:]
		}
		if !c.Defined() {
			return nil, errors.New("dag-pb link: missing Hash")
		}
		out = append(out, c)
	}
	return out, nil
}

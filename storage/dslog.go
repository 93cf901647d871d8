// dslog.go: small datastore writes (pins, names, the MFS root) acknowledged
// once their records are durable in the active segment, like block puts
// (lag.go), and folded into the "data" bucket by the next index commit.

package storage

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"sync"
)

// A datastore record in a segment has the key
//
//	0x00 0x00 | op ('P' put, 'D' delete) | datastore key
//
// which no stored block can have (an identity multihash of length zero
// followed by more bytes is not a multihash), and the data
//
//	uint32 big-endian CRC-32C of key and value | value
//
// Block records check themselves by their hash; the checksum lets replay
// find where a crash cut a datastore record.
const dsRecTag = "\x00\x00"

const (
	dsRecPut = 'P'
	dsRecDel = 'D'
)

// maxDSRecKey is the longest datastore key a record can carry (a record's
// key length is one byte); longer keys go through a full commit.
const maxDSRecKey = 255 - len(dsRecTag) - 1

// crcTable is CRC-32C's (hardware instructions on amd64 and arm64): the
// checksum of datastore records and of the block bytes an index entry
// locates (loc.summed).
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// dsRecord returns the segment record of a datastore mutation.
func dsRecord(m mutation) *pendingRec {
	op := byte(dsRecPut)
	if m.kind == opDel {
		op = dsRecDel
	}
	key := make([]byte, 0, len(dsRecTag)+1+len(m.key))
	key = append(append(append(key, dsRecTag...), op), m.key...)
	data := make([]byte, 4, 4+len(m.val))
	if m.kind == opPut {
		data = append(data, m.val...)
	}
	binary.BigEndian.PutUint32(data, dsRecSum(key, data[4:]))
	return &pendingRec{key: key, data: data}
}

func dsRecSum(key, val []byte) uint32 {
	return crc32.Update(crc32.Checksum(key, crcTable), crcTable, val)
}

// isDSRecord reports whether a segment record's key is a datastore
// record's.
func isDSRecord(key []byte) bool { return bytes.HasPrefix(key, []byte(dsRecTag)) }

// parseDSRecord decodes a datastore record; ok is false when it is cut or
// damaged.
func parseDSRecord(key, data []byte) (m mutation, ok bool) {
	if !isDSRecord(key) || len(key) < len(dsRecTag)+1 || len(data) < 4 {
		return m, false
	}
	if binary.BigEndian.Uint32(data) != dsRecSum(key, data[4:]) {
		return m, false
	}
	m.bucket = bucketData
	m.key = append([]byte(nil), key[len(dsRecTag)+1:]...)
	switch key[len(dsRecTag)] {
	case dsRecPut:
		m.kind = opPut
		m.val = append([]byte{}, data[4:]...)
	case dsRecDel:
		if len(data) != 4 {
			return m, false
		}
		m.kind = opDel
	default:
		return m, false
	}
	return m, true
}

// dsRecSize is the bytes m's record takes in a segment.
func dsRecSize(m mutation) int64 {
	return recSize(m.key, m.val) + int64(len(dsRecTag)+1+4)
}

// dsLagEligible reports whether m is a datastore write a record can carry.
func dsLagEligible(m mutation) bool {
	return string(m.bucket) == string(bucketData) && (m.kind == opPut || m.kind == opDel) && len(m.key) <= maxDSRecKey
}

// dsOverlay holds the datastore writes acknowledged from the active
// segment and not yet in the "data" bucket: the latest value of each key,
// or its deletion. Readers hold mu (read) across their look here and in
// bbolt; the writer holds it (write) while it changes the overlay and
// across the commit that folds it, so that a reader never sees a key
// between the bucket and the overlay.
type dsOverlay struct {
	mu    sync.RWMutex
	m     map[string]dsEnt
	bytes uint64 // the values' bytes, for the lag bound
}

type dsEnt struct {
	val []byte
	del bool
}

// lookup returns what the overlay says of key: ok false when it says
// nothing. The caller holds mu.
func (o *dsOverlay) lookup(key []byte) (e dsEnt, ok bool) {
	e, ok = o.m[string(key)]
	return e, ok
}

// set records m (the writer, holding mu).
func (o *dsOverlay) set(m mutation) {
	if o.m == nil {
		o.m = map[string]dsEnt{}
	}
	if old, ok := o.m[string(m.key)]; ok {
		o.bytes -= uint64(len(old.val))
	}
	o.m[string(m.key)] = dsEnt{val: m.val, del: m.kind == opDel}
	o.bytes += uint64(len(m.val))
}

func (o *dsOverlay) empty() bool { return len(o.m) == 0 }

func (o *dsOverlay) clear() {
	clear(o.m)
	o.bytes = 0
}

// cat.go: the "cat" command: file bytes straight from storage.

package commands

import (
	"errors"

	"cairn/rpc"

	"github.com/ipfs/go-cid"
)

var catCommands = []*rpc.Command{{
	Path:     "cat",
	Synopsis: "Show IPFS object data.",
	Help:     "Displays the data contained by an IPFS or IPNS object(s) at the given path.",
	Args: []rpc.Arg{{Name: "ipfs-path", Kind: rpc.ArgString, Required: true, Variadic: true, Stdin: true,
		Help: "The path to the IPFS object(s) to be outputted."}},
	Options: []rpc.Option{
		{Names: []string{"offset", "o"}, Type: rpc.Int64, Help: "Byte offset to begin reading from."},
		{Names: []string{"length", "l"}, Type: rpc.Int64, Help: "Maximum number of bytes to read."},
		{Names: []string{"progress", "p"}, Type: rpc.Bool, Help: "Stream progress data."},
	},
	BodyArgs: true,
	Output:   rpc.OutBytes,
	Run:      runCat,
}}

func runCat(r *rpc.Request, e rpc.Emitter) error {
	offset := r.Int("offset")
	if offset < 0 {
		return errors.New("cannot specify negative offset")
	}
	length := int64(-1)
	if r.IsSet("length") {
		length = r.Int("length")
		if length < 0 {
			return errors.New("cannot specify negative length")
		}
	}
	if length == 0 {
		// Kubo answers an empty stream without resolving anything.
		e.SetLength(0)
		return nil
	}
	type part struct {
		c    cid.Cid
		size int64
	}
	var parts []part
	var total int64
	for _, p := range r.Args {
		res, err := r.Node.Dag().Resolve(r.Ctx, p)
		if err != nil {
			return err
		}
		size, err := r.Node.UnixFS().FileSize(r.Ctx, res.Cid)
		if err != nil {
			return err
		}
		parts = append(parts, part{res.Cid, int64(size)})
		total += int64(size)
	}
	send := total - offset
	if send < 0 {
		send = 0
	}
	if length >= 0 && length < send {
		send = length
	}
	e.SetLength(uint64(send))
	if send == 0 {
		return nil
	}
	// Walk the concatenation, skipping whole files before the offset.
	left := send
	for _, p := range parts {
		if left <= 0 {
			break
		}
		if offset >= p.size {
			offset -= p.size
			continue
		}
		n := p.size - offset
		if n > left {
			n = left
		}
		if err := r.Node.UnixFS().WriteFile(r.Ctx, p.c, offset, n, e); err != nil {
			return err
		}
		left -= n
		offset = 0
	}
	return nil
}

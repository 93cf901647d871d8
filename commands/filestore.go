// filestore.go: the "filestore" commands (blocks kept as references to
// files on the daemon's disk, see node/filestore.go) and "urlstore add".

package commands

import (
	"errors"
	"fmt"

	"cairn/rpc"

	"github.com/ipfs/boxo/filestore"
	"github.com/ipfs/go-cid"
)

var filestoreCommands = []*rpc.Command{
	{
		Path:     "filestore/ls",
		Synopsis: "List objects in filestore.",
		Help: `List objects in the filestore.

If one or more <obj> is specified only list those specific objects,
otherwise list all objects.

The output is:

<hash> <size> <path> <offset>`,
		Args: []rpc.Arg{{Name: "obj", Kind: rpc.ArgString, Variadic: true, Help: "Cid of objects to list."}},
		Options: []rpc.Option{
			{Names: []string{"file-order"}, Type: rpc.Bool, Help: "sort the results based on the path of the backing file"},
		},
		Output:   rpc.OutStream,
		Run:      runFilestoreLs,
		Type:     func() any { return &filestore.ListRes{} },
		Text:     filestoreLsText,
		TextDone: filestoreTextDone,
	},
	{
		Path:     "filestore/verify",
		Synopsis: "Verify objects in filestore.",
		Help: `Verify objects in the filestore.

If one or more <obj> is specified only verify those specific objects,
otherwise verify all objects.

The output is:

<status> <hash> <size> <path> <offset> [<action>]

Where <status> is one of:
ok:       the block can be reconstructed
changed:  the contents of the backing file have changed
no-file:  the backing file could not be found
error:    there was some other problem reading the file
missing:  <obj> could not be found in the filestore
ERROR:    internal error, most likely due to a corrupt database

Where <action> is present only when removing bad blocks and is one of:
remove:   link to the block will be removed from datastore
keep:     keep link, nothing to do

For ERROR entries the error will also be printed to stderr.`,
		Args: []rpc.Arg{{Name: "obj", Kind: rpc.ArgString, Variadic: true, Help: "Cid of objects to verify."}},
		Options: []rpc.Option{
			{Names: []string{"file-order"}, Type: rpc.Bool, Help: "verify the objects based on the order of the backing file"},
			{Names: []string{"remove-bad-blocks"}, Type: rpc.Bool, Help: "remove bad blocks. WARNING: This may remove pinned data. You should run 'ipfs pin verify' after running this command and correct any issues."},
		},
		Output: rpc.OutStream,
		Run:    runFilestoreVerify,
		Type:   func() any { return &filestore.ListRes{} },
		Text:   filestoreVerifyText,
	},
	{
		Path:     "filestore/dups",
		Synopsis: "List blocks that are both in the filestore and standard block storage.",
		Output:   rpc.OutStream,
		Run:      runFilestoreDups,
		Type:     func() any { return &RefWrapper{} },
		Text:     refsText,
	},
	{
		Path:     "urlstore/add",
		Synopsis: "Add URL via urlstore.",
		Help: `Add URLs to IPFS without storing the data locally.

The URL provided must be stable and ideally on a web server under your
control. The content is read once to hash it; later reads fetch byte
ranges from the URL again. Needs Experimental.UrlstoreEnabled.

The file is added using raw-leaves and CIDv1 but otherwise using the
default settings for 'add'. (Deprecated by Kubo in favour of
'add --nocopy --cid-version=1 URL'.)`,
		Args: []rpc.Arg{{Name: "url", Kind: rpc.ArgString, Required: true, Help: "URL to add to IPFS"}},
		Options: []rpc.Option{
			{Names: []string{"trickle", "t"}, Type: rpc.Bool, Help: "Use trickle-dag format for dag generation."},
			{Names: []string{"pin"}, Type: rpc.Bool, Default: true, Help: "Pin this object when adding."},
		},
		Output: rpc.OutSingle,
		Run:    runUrlstoreAdd,
		Type:   func() any { return &BlockStat{} },
		Text: func(t *rpc.TextEnv, v any) error {
			_, err := fmt.Fprintln(t.Out, v.(*BlockStat).Key)
			return err
		},
	},
}

// filestoreList emits the entries of the given CIDs (always verified, as
// Kubo does for listed arguments), or of every reference.
func filestoreList(r *rpc.Request, e rpc.Emitter, verify, remove bool) error {
	fs, err := r.Node.Storage().Filestore()
	if err != nil {
		return err
	}
	bad := func(s filestore.Status) bool {
		return s != filestore.StatusOk && s != filestore.StatusOtherError
	}
	if len(r.Args) > 0 {
		for _, a := range r.Args {
			c, err := cid.Decode(a)
			if err != nil {
				if err := e.Emit(&filestore.ListRes{Status: filestore.StatusOtherError, ErrorMsg: fmt.Sprintf("%s: %v", a, err)}); err != nil {
					return err
				}
				continue
			}
			res := filestore.Verify(r.Ctx, fs, c)
			if remove && bad(res.Status) {
				if err := fs.FileManager().DeleteBlock(r.Ctx, res.Key); err != nil {
					return err
				}
			}
			if err := e.Emit(res); err != nil {
				return err
			}
		}
		return nil
	}
	list := filestore.ListAll
	if verify {
		list = filestore.VerifyAll
	}
	next, err := list(r.Ctx, fs, r.Bool("file-order"))
	if err != nil {
		return err
	}
	for {
		res := next(r.Ctx)
		if res == nil {
			return r.Ctx.Err()
		}
		if remove && bad(res.Status) {
			if err := fs.FileManager().DeleteBlock(r.Ctx, res.Key); err != nil {
				return err
			}
		}
		if err := e.Emit(res); err != nil {
			return err
		}
	}
}

func runFilestoreLs(r *rpc.Request, e rpc.Emitter) error { return filestoreList(r, e, false, false) }
func runFilestoreVerify(r *rpc.Request, e rpc.Emitter) error {
	return filestoreList(r, e, true, r.Bool("remove-bad-blocks"))
}

// filestoreState remembers whether an entry carried an error.
type filestoreState struct{ failed bool }

func filestoreLsText(t *rpc.TextEnv, v any) error {
	res := v.(*filestore.ListRes)
	if res.ErrorMsg != "" {
		t.State = &filestoreState{failed: true}
		fmt.Fprintf(t.Err, "%s\n", res.ErrorMsg)
		return nil
	}
	fmt.Fprintf(t.Out, "%s\n", res.FormatLong(textEncoder(t)))
	return nil
}

func filestoreTextDone(t *rpc.TextEnv) error {
	if st, _ := t.State.(*filestoreState); st != nil && st.failed {
		return errors.New("errors while displaying some entries")
	}
	return nil
}

func filestoreVerifyText(t *rpc.TextEnv, v any) error {
	res := v.(*filestore.ListRes)
	if res.Status == filestore.StatusOtherError {
		fmt.Fprintf(t.Err, "%s\n", res.ErrorMsg)
	}
	line := res.Status.Format() + " " + res.FormatLong(textEncoder(t))
	if t.Req != nil && t.Req.Bool("remove-bad-blocks") {
		action := "keep"
		if res.Status != filestore.StatusOk && res.Status != filestore.StatusOtherError {
			action = "remove"
		}
		line += " " + action
	}
	_, err := fmt.Fprintln(t.Out, line)
	return err
}

// textEncoder is the request's CID encoder for text output.
func textEncoder(t *rpc.TextEnv) func(cid.Cid) string {
	if t.Req != nil {
		if enc, err := t.Req.CidEncoder(); err == nil {
			return enc.Encode
		}
	}
	return cid.Cid.String
}

func runFilestoreDups(r *rpc.Request, e rpc.Emitter) error {
	if _, err := r.Node.Storage().Filestore(); err != nil {
		return err
	}
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	err = r.Node.Storage().FilestoreDups(r.Ctx, func(c cid.Cid) error {
		return e.Emit(&RefWrapper{Ref: enc.Encode(c)})
	})
	if err != nil && !errors.Is(err, rpc.ErrClientGone) {
		return e.Emit(&RefWrapper{Err: err.Error()})
	}
	return err
}

func runUrlstoreAdd(r *rpc.Request, e rpc.Emitter) error {
	enc, err := r.CidEncoder()
	if err != nil {
		return err
	}
	c, size, err := r.Node.UnixFS().AddURL(r.Ctx, r.Args[0], r.Bool("trickle"), r.Bool("pin"))
	if err != nil {
		return err
	}
	return e.Emit(&BlockStat{Key: enc.Encode(c), Size: int(size)})
}

// multibase.go: the "multibase" family (Kubo 0.43): encode bytes as a
// multibase string, decode one, transcode between bases, list the bases.
// None of them needs a repo.

package commands

import (
	"fmt"
	"io"

	"cairn/rpc"

	mbase "github.com/multiformats/go-multibase"
)

// maxMultibaseInput bounds what one call reads: Kubo reads it all into
// memory, and so does the multibase library, so a board caps it.
const maxMultibaseInput = 32 << 20

var multibaseBaseOption = rpc.Option{Names: []string{"b"}, Type: rpc.String, Default: "base64url", Help: "multibase encoding"}

var multibaseCommands = []*rpc.Command{
	{
		Path:     "multibase/encode",
		Synopsis: "Encode data into multibase string",
		Help: `This command expects a file name or data provided via stdin.

By default it will use URL-safe base64url encoding,
but one can customize used base with -b:

  > echo hello | cairn multibase encode -b base16 > output_file
  > cat output_file
  f68656c6c6f0a`,
		Args:    []rpc.Arg{{Name: "file", Kind: rpc.ArgFile, Required: true, Stdin: true, Help: "data to encode"}},
		Options: []rpc.Option{multibaseBaseOption},
		NoRepo:  true,
		Output:  rpc.OutBytes,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			return emitEncoded(r, e, readMultibaseInput)
		},
	},
	{
		Path:     "multibase/decode",
		Synopsis: "Decode multibase string",
		Help: `This command expects multibase inside of a file or via stdin:

  > echo -n hello | cairn multibase encode -b base16 > file
  > cairn multibase decode file
  hello`,
		Args:   []rpc.Arg{{Name: "encoded_file", Kind: rpc.ArgFile, Required: true, Stdin: true, Help: "encoded data to decode"}},
		NoRepo: true,
		Output: rpc.OutBytes,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			data, err := decodeMultibaseInput(r)
			if err != nil {
				return err
			}
			return emitBytes(e, data)
		},
	},
	{
		Path:     "multibase/transcode",
		Synopsis: "Transcode multibase string between bases",
		Help: `This command expects multibase inside of a file or via stdin.

By default it will use URL-safe base64url encoding,
but one can customize used base with -b:

  > echo -n hello | cairn multibase encode > file
  > cairn multibase transcode file -b base16
  f68656c6c6f`,
		Args:    []rpc.Arg{{Name: "encoded_file", Kind: rpc.ArgFile, Required: true, Stdin: true, Help: "encoded data to decode"}},
		Options: []rpc.Option{multibaseBaseOption},
		NoRepo:  true,
		Output:  rpc.OutBytes,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			return emitEncoded(r, e, decodeMultibaseInput)
		},
	},
	basesCommand("multibase/list", "'cairn multibase list' relies on https://github.com/multiformats/go-multibase"),
}

// readMultibaseInput reads the file argument, at most maxMultibaseInput.
func readMultibaseInput(r *rpc.Request) ([]byte, error) {
	_, f, err := firstFilePart(r)
	if err != nil {
		return nil, fmt.Errorf("failed to access file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxMultibaseInput+1))
	if err != nil {
		return nil, fmt.Errorf("failed to read file contents: %w", err)
	}
	if len(data) > maxMultibaseInput {
		return nil, fmt.Errorf("failed to read file contents: larger than %d bytes", maxMultibaseInput)
	}
	return data, nil
}

func decodeMultibaseInput(r *rpc.Request) ([]byte, error) {
	text, err := readMultibaseInput(r)
	if err != nil {
		return nil, err
	}
	_, data, err := mbase.Decode(string(text))
	if err != nil {
		return nil, fmt.Errorf("failed to decode multibase: %w", err)
	}
	return data, nil
}

// emitEncoded answers the bytes read returns, in the base -b names.
func emitEncoded(r *rpc.Request, e rpc.Emitter, read func(*rpc.Request) ([]byte, error)) error {
	enc, err := mbase.EncoderByName(r.String("b"))
	if err != nil {
		return err
	}
	data, err := read(r)
	if err != nil {
		return err
	}
	return emitBytes(e, []byte(enc.Encode(data)))
}

// emitBytes answers b as the command's byte stream (with no length
// announced, as Kubo's multibase commands).
func emitBytes(e rpc.Emitter, b []byte) error {
	_, err := e.Write(b)
	return err
}

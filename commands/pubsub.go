// pubsub.go: pubsub/ls, peers, pub, sub and reset (node/p2p/pubsub.go does
// the work; docs/pubsub.md). Topics and message fields travel as Kubo
// 0.42 sends them, multibase base64url ("u..."); the 0.9 forms of the
// seed are accepted too: a topic argument that does not start with "u" is
// the topic itself, and pub with the payload in arg#2 (and further args)
// publishes those.

package commands

import (
	"context"
	"errors"
	"fmt"
	"io"

	"cairn/node/p2p"
	"cairn/rpc"

	"github.com/libp2p/go-libp2p/core/peer"
	mbase "github.com/multiformats/go-multibase"
)

// PubsubMessage is one line of pubsub/sub (Kubo 0.42's fields).
type PubsubMessage struct {
	From     string   `json:"from,omitempty"`
	Data     string   `json:"data,omitempty"`
	Seqno    string   `json:"seqno,omitempty"`
	TopicIDs []string `json:"topicIDs,omitempty"`
}

// PubsubResetResult is the body of pubsub/reset.
type PubsubResetResult struct {
	Deleted int64 `json:"deleted"`
}

// encodeTopics writes topics as Kubo 0.42's clients send them.
func encodeTopics(args []string) []string {
	out := append([]string(nil), args...)
	if len(out) > 0 {
		out[0] = mb64(out[0])
	}
	return out
}

func mb64(s string) string {
	enc, _ := mbase.EncoderByName("base64url")
	return enc.Encode([]byte(s))
}

// decodeTopic reads a topic argument: multibase base64url ("u..."), as
// Kubo 0.42's clients send it, or the topic itself (0.9).
func decodeTopic(s string) (string, error) {
	if len(s) == 0 || s[0] != 'u' {
		return s, nil
	}
	enc, data, err := mbase.Decode(s)
	if err != nil {
		return "", fmt.Errorf("URL arg must be multibase encoded: %w", err)
	}
	if enc != mbase.Base64url {
		return "", errors.New("URL arg must be base64url encoded")
	}
	return string(data), nil
}

// pubsubOf returns the node's pubsub service or Kubo's error.
func pubsubOf(r *rpc.Request) (*p2p.PubSub, error) {
	if r.Node == nil || r.Node.Net == nil || r.Node.Net.PubSub == nil {
		return nil, p2p.ErrPubsubDisabled
	}
	return r.Node.Net.PubSub, nil
}

func decodedStringsText(t *rpc.TextEnv, v any) error {
	for _, s := range v.(*StringsOutput).Strings {
		_, data, err := mbase.Decode(s)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(t.Out, "%s\n", escNonPrint(string(data))); err != nil {
			return err
		}
	}
	return nil
}

// escNonPrint quotes a string that holds non-printable characters (Kubo's
// EscNonPrint).
func escNonPrint(s string) string {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			q := fmt.Sprintf("%q", s)
			return q[1 : len(q)-1]
		}
	}
	return s
}

var pubsubCommands = []*rpc.Command{
	{
		Path:     "pubsub/ls",
		Synopsis: "List subscribed topics by name.",
		Output:   rpc.OutSingle,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			ps, err := pubsubOf(r)
			if err != nil {
				return err
			}
			topics := ps.Topics()
			for i, t := range topics {
				topics[i] = mb64(t)
			}
			return e.Emit(&StringsOutput{Strings: topics})
		},
		Type: func() any { return &StringsOutput{} },
		Text: decodedStringsText,
	},
	{
		Path:       "pubsub/peers",
		Synopsis:   "List peers we are currently pubsubbing with.",
		Args:       []rpc.Arg{{Name: "topic", Kind: rpc.ArgString, Help: "Topic to list connected peers of."}},
		EncodeArgs: encodeTopics,
		Output:     rpc.OutSingle,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			ps, err := pubsubOf(r)
			if err != nil {
				return err
			}
			var topic string
			if len(r.Args) > 0 {
				if topic, err = decodeTopic(r.Args[0]); err != nil {
					return err
				}
			}
			ids := ps.Peers(topic)
			out := make([]string, 0, len(ids))
			for _, id := range ids {
				out = append(out, id.String())
			}
			return e.Emit(&StringsOutput{Strings: out})
		},
		Type: func() any { return &StringsOutput{} },
		Text: stringsText,
	},
	{
		Path:     "pubsub/pub",
		Synopsis: "Publish data to a given pubsub topic.",
		Args: []rpc.Arg{
			{Name: "topic", Kind: rpc.ArgString, Required: true, Help: "Topic to publish to (multibase encoded when sent over HTTP RPC)."},
			{Name: "payload", Kind: rpc.ArgString, Variadic: true, Help: "Payloads to publish, one message each (0.9's form; Kubo 0.42 reads the data argument)."},
			{Name: "data", Kind: rpc.ArgFile, Stdin: true, Help: "The data to be published."},
		},
		EncodeArgs: encodeTopics,
		Output:     rpc.OutNone,
		Run:        runPubsubPub,
	},
	{
		Path:       "pubsub/sub",
		Synopsis:   "Subscribe to messages on a given topic.",
		Args:       []rpc.Arg{{Name: "topic", Kind: rpc.ArgString, Required: true, Help: "Name of topic to subscribe to (multibase encoded when sent over HTTP RPC)."}},
		Options:    []rpc.Option{{Names: []string{"discover"}, Type: rpc.Bool, Help: "Deprecated option to instruct pubsub to discovery peers for the topic. Discovery is now built into pubsub."}},
		EncodeArgs: encodeTopics,
		Output:     rpc.OutStream,
		Run:        runPubsubSub,
		Type:       func() any { return &PubsubMessage{} },
		Text: func(t *rpc.TextEnv, v any) error {
			_, data, err := mbase.Decode(v.(*PubsubMessage).Data)
			if err != nil {
				return err
			}
			_, err = t.Out.Write(data)
			return err
		},
	},
	{
		Path:     "pubsub/reset",
		Synopsis: "Reset pubsub validator state.",
		Options:  []rpc.Option{{Names: []string{"peer", "p"}, Type: rpc.String, Help: "Only reset state for this peer ID"}},
		Output:   rpc.OutSingle,
		Run: func(r *rpc.Request, e rpc.Emitter) error {
			ps, err := pubsubOf(r)
			if err != nil {
				return err
			}
			var id peer.ID
			if s := r.String("peer"); s != "" {
				if id, err = peer.Decode(s); err != nil {
					return fmt.Errorf("invalid peer ID: %w", err)
				}
			}
			return e.Emit(&PubsubResetResult{Deleted: int64(ps.ResetSeqnos(id))})
		},
		Type: func() any { return &PubsubResetResult{} },
		Text: func(t *rpc.TextEnv, v any) error {
			res := v.(*PubsubResetResult)
			if p := t.Req.String("peer"); p != "" {
				if res.Deleted == 0 {
					_, err := fmt.Fprintf(t.Out, "No validator state found for peer %s\n", p)
					return err
				}
				_, err := fmt.Fprintf(t.Out, "Reset validator state for peer %s\n", p)
				return err
			}
			_, err := fmt.Fprintf(t.Out, "Reset validator state for %d peer(s)\n", res.Deleted)
			return err
		},
	},
}

func runPubsubPub(r *rpc.Request, e rpc.Emitter) error {
	ps, err := pubsubOf(r)
	if err != nil {
		return err
	}
	topic, err := decodeTopic(r.Args[0])
	if err != nil {
		return err
	}
	if payloads := r.Args[1:]; len(payloads) > 0 {
		// 0.9: every further argument is one message.
		for _, p := range payloads {
			if err := ps.Publish(r.Ctx, topic, []byte(p)); err != nil {
				return err
			}
		}
		return nil
	}
	f, err := firstFile(r.Files)
	if err != nil {
		return errors.New("file argument 'data' is required")
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, p2p.PubsubMaxMessageSize+1))
	if err != nil {
		return err
	}
	return ps.Publish(r.Ctx, topic, data)
}

func runPubsubSub(r *rpc.Request, e rpc.Emitter) error {
	ps, err := pubsubOf(r)
	if err != nil {
		return err
	}
	topic, err := decodeTopic(r.Args[0])
	if err != nil {
		return err
	}
	sub, err := ps.Subscribe(topic)
	if err != nil {
		return err
	}
	defer sub.Close()
	if err := rpc.StartStream(e); err != nil {
		return err
	}
	for {
		m, err := sub.Next(r.Ctx)
		if err != nil {
			if r.Ctx.Err() != nil || errors.Is(err, context.Canceled) {
				return nil // the client went, or the node stops
			}
			return err
		}
		out := &PubsubMessage{Data: mb64(string(m.Data)), From: m.GetFrom().String(), Seqno: mb64(string(m.Seqno))}
		if m.Topic != nil {
			out.TopicIDs = []string{mb64(*m.Topic)}
		}
		if err := e.Emit(out); err != nil {
			return err
		}
	}
}

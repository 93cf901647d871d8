package rpc_test

import (
	"testing"

	"cairn/rpc"
)

// Ensure an option given in two spellings is not an error: the long name
// wins (Kubo lets one win); one spelling twice stays a 400.
func TestOptions_TwoSpellings_OneWins(t *testing.T) {
	valid := []rpc.Option{{Names: []string{"recursive", "r"}, Type: rpc.Bool}}
	for _, tc := range []struct {
		q    []rpc.KV
		want bool
	}{
		{[]rpc.KV{{Key: "r", Value: "0"}, {Key: "recursive", Value: "1"}}, true},
		{[]rpc.KV{{Key: "recursive", Value: "1"}, {Key: "r", Value: "0"}}, true},
		{[]rpc.KV{{Key: "recursive", Value: "false"}, {Key: "r", Value: "true"}}, false},
	} {
		opts, err := rpc.DecodeOptions(valid, tc.q)
		if err != nil {
			t.Fatalf("%v: %v", tc.q, err)
		}
		if opts["recursive"] != tc.want {
			t.Fatalf("%v: recursive=%v", tc.q, opts["recursive"])
		}
	}
	_, err := rpc.DecodeOptions(valid, []rpc.KV{{Key: "r", Value: "0"}, {Key: "r", Value: "1"}})
	if want := "expected key recursive to have only a single value, received [0 1]"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}

// Ensure surplus argument values are dropped, or kept as empty strings
// (Kubo's HTTP parser) for a command that asks for them.
func TestBindArgs_SurplusValues(t *testing.T) {
	cmd := &rpc.Command{Path: "config", Args: []rpc.Arg{
		{Name: "key", Kind: rpc.ArgString, Required: true},
		{Name: "value", Kind: rpc.ArgString},
	}}
	got, err := rpc.BindArgs(cmd, []string{"Foo", "bar", "baz"}, nil, false)
	if err != nil || len(got) != 2 || got[1] != "bar" {
		t.Fatalf("dropped: %q %v", got, err)
	}
	cmd.SurplusArgs = true
	got, err = rpc.BindArgs(cmd, []string{"Foo", "bar", "baz"}, nil, false)
	if err != nil || len(got) != 3 || got[0] != "Foo" || got[1] != "bar" || got[2] != "" {
		t.Fatalf("kept: %q %v", got, err)
	}
	if got, _ = rpc.BindArgs(cmd, []string{"Foo"}, nil, false); len(got) != 1 {
		t.Fatalf("no surplus: %q", got)
	}
}

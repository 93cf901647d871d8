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

package rpc

import (
	"bytes"
	"net"
	"testing"
)

// recConn records each write made on it.
type recConn struct {
	net.Conn
	writes [][]byte
}

func (c *recConn) Write(p []byte) (int, error) {
	c.writes = append(c.writes, append([]byte(nil), p...))
	return len(p), nil
}

// Corked writes wait and go out in order: when the next would not fit, at
// Flush, and with the first write after Uncork; nothing is held otherwise.
func TestCorkConn_HoldsAndSendsInOrder(t *testing.T) {
	rc := &recConn{}
	c := &corkConn{Conn: rc}
	var want bytes.Buffer
	write := func(b []byte) {
		t.Helper()
		if n, err := c.Write(b); n != len(b) || err != nil {
			t.Fatalf("Write: %d, %v", n, err)
		}
		want.Write(b)
	}
	write([]byte("uncorked")) // straight through
	if len(rc.writes) != 1 {
		t.Fatalf("%d writes before corking, want 1", len(rc.writes))
	}
	c.Cork()
	chunk := bytes.Repeat([]byte{'c'}, 4<<10)
	for i := 0; i < corkBytes/len(chunk)+1; i++ { // one more than fits
		chunk[0] = byte(i)
		write(chunk)
	}
	if len(rc.writes) != 2 || len(rc.writes[1]) != corkBytes {
		t.Fatalf("writes %d (last %d bytes), want 2, the second %d bytes", len(rc.writes), len(rc.writes[len(rc.writes)-1]), corkBytes)
	}
	if err := c.Flush(); err != nil || len(rc.writes) != 3 {
		t.Fatalf("Flush: %v, %d writes", err, len(rc.writes))
	}
	write([]byte("0\r\n"))
	c.Uncork()
	if len(rc.writes) != 3 {
		t.Fatalf("Uncork wrote")
	}
	write([]byte("\r\n"))
	if len(rc.writes) != 4 || string(rc.writes[3]) != "0\r\n\r\n" {
		t.Fatalf("after Uncork: %d writes, last %q", len(rc.writes), rc.writes[len(rc.writes)-1])
	}
	if got := bytes.Join(rc.writes, nil); !bytes.Equal(got, want.Bytes()) {
		t.Fatal("bytes out differ from bytes in")
	}
	if c.held != nil {
		t.Error("a buffer is still held")
	}
}

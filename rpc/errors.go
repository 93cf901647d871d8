// errors.go: the command error type and its wire form.

package rpc

import (
	"errors"
	"fmt"
)

// Error codes of the JSON error object.
const (
	CodeNormal         = 0
	CodeClient         = 1
	CodeImplementation = 2
)

// Error is a command failure with a Kubo error code. Only CodeClient maps
// to HTTP 400; every other code is 500.
type Error struct {
	Message string
	Code    int
	Err     error // cause, for errors.Is; may be nil
}

func (e *Error) Error() string { return e.Message }

// Unwrap exposes the cause.
func (e *Error) Unwrap() error { return e.Err }

// ClientError builds a Code 1 (400) error.
func ClientError(format string, a ...any) error {
	err := fmt.Errorf(format, a...)
	return &Error{Message: err.Error(), Code: CodeClient, Err: errors.Unwrap(err)}
}

// wireError is the JSON body of an error.
type wireError struct {
	Message string
	Code    int
	Type    string
}

func toWire(err error) wireError {
	var e *Error
	if errors.As(err, &e) {
		return wireError{Message: e.Message, Code: e.Code, Type: "error"}
	}
	return wireError{Message: err.Error(), Code: CodeNormal, Type: "error"}
}

func statusOf(err error) int {
	var e *Error
	if errors.As(err, &e) && e.Code == CodeClient {
		return 400
	}
	return 500
}

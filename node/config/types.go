// types.go: the value types of Kubo 0.42's config file, as far as their
// JSON goes: what each accepts and how it is written back, and how cairn
// reads them (WithDefault, IsDefault, as in Kubo). Their names are Kubo's, so that a wrong value fails with Kubo's message ("json:
// cannot unmarshal number into Go struct field Gateway.Gateway.RootRedirect
// of type string").

package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// Strings is a list written as a single string when it holds one value
// and as null when empty.
type Strings []string

// UnmarshalJSON accepts a string or a list.
func (o *Strings) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '[' {
		return json.Unmarshal(data, (*[]string)(o))
	}
	var value string
	if err := json.Unmarshal(data, &value); err != nil {
		return err
	}
	if value == "" {
		*o = []string{}
	} else {
		*o = []string{value}
	}
	return nil
}

// MarshalJSON writes null, a string or a list.
func (o Strings) MarshalJSON() ([]byte, error) {
	switch len(o) {
	case 0:
		return []byte("null"), nil
	case 1:
		return json.Marshal(o[0])
	}
	return json.Marshal([]string(o))
}

// Flag is true, false or null (the default).
type Flag int8

// The values of a Flag.
const (
	False   Flag = -1
	Default Flag = 0
	True    Flag = 1
)

// MarshalJSON writes null, true or false.
func (f Flag) MarshalJSON() ([]byte, error) {
	switch f {
	case Default:
		return []byte("null"), nil
	case True:
		return []byte("true"), nil
	case False:
		return []byte("false"), nil
	}
	return nil, fmt.Errorf("invalid flag value: %d", f)
}

// UnmarshalJSON accepts null, true and false.
func (f *Flag) UnmarshalJSON(input []byte) error {
	switch string(input) {
	case "null":
		*f = Default
	case "false":
		*f = False
	case "true":
		*f = True
	default:
		return fmt.Errorf("failed to unmarshal %q into a flag: must be null/undefined, true, or false", string(input))
	}
	return nil
}

// WithDefault is the flag's value, or def when it is null.
func (f Flag) WithDefault(def bool) bool {
	if f == Default {
		return def
	}
	return f == True
}

// Priority is a positive number, false (disabled) or null (the default).
type Priority int64

// MarshalJSON writes the number, false or null.
func (p Priority) MarshalJSON() ([]byte, error) {
	switch {
	case p > 0:
		return json.Marshal(int64(p))
	case p == 0:
		return []byte("null"), nil
	case p == -1:
		return []byte("false"), nil
	}
	return nil, fmt.Errorf("invalid priority value: %d", p)
}

// UnmarshalJSON accepts null, false or a positive integer.
func (p *Priority) UnmarshalJSON(input []byte) error {
	switch string(input) {
	case "null", "undefined":
		*p = 0
	case "false":
		*p = -1
	case "true":
		return errors.New("'true' is not a valid priority")
	default:
		var v int64
		if err := json.Unmarshal(input, &v); err != nil {
			return err
		}
		if v <= 0 {
			return fmt.Errorf("priority must be positive: %d <= 0", v)
		}
		*p = Priority(v)
	}
	return nil
}

// OptionalDuration is a Go duration string or null.
type OptionalDuration struct{ value *time.Duration }

// NewOptionalDuration returns a set OptionalDuration.
func NewOptionalDuration(d time.Duration) *OptionalDuration { return &OptionalDuration{&d} }

// MarshalJSON writes null or the duration's string.
func (d OptionalDuration) MarshalJSON() ([]byte, error) {
	if d.value == nil {
		return []byte("null"), nil
	}
	return json.Marshal(d.value.String())
}

// UnmarshalJSON accepts null, "", "default" or a duration.
func (d *OptionalDuration) UnmarshalJSON(input []byte) error {
	switch string(input) {
	case "null", "undefined", `"null"`, "", "default", `""`, `"default"`:
		*d = OptionalDuration{}
		return nil
	}
	v, err := time.ParseDuration(string(bytes.Trim(input, `"`)))
	if err != nil {
		return err
	}
	*d = OptionalDuration{&v}
	return nil
}

// WithDefault is the duration, or def when d is nil or null.
func (d *OptionalDuration) WithDefault(def time.Duration) time.Duration {
	if d.IsDefault() {
		return def
	}
	return *d.value
}

// IsDefault reports whether d is nil or null.
func (d *OptionalDuration) IsDefault() bool { return d == nil || d.value == nil }

// Duration is a duration string or a number of nanoseconds.
type Duration struct{ time.Duration }

// MarshalJSON writes the duration's string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON accepts a duration string or a number.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch value := v.(type) {
	case float64:
		d.Duration = time.Duration(value)
		return nil
	case string:
		var err error
		d.Duration, err = time.ParseDuration(value)
		return err
	}
	return fmt.Errorf("unable to parse duration, expected a duration string or a float, but got %T", v)
}

// OptionalInteger is an integer or null.
type OptionalInteger struct{ value *int64 }

// NewOptionalInteger returns a set OptionalInteger.
func NewOptionalInteger(v int64) *OptionalInteger { return &OptionalInteger{&v} }

// MarshalJSON writes null or the number.
func (p OptionalInteger) MarshalJSON() ([]byte, error) {
	if p.value == nil {
		return []byte("null"), nil
	}
	return json.Marshal(*p.value)
}

// UnmarshalJSON accepts null or an integer.
func (p *OptionalInteger) UnmarshalJSON(input []byte) error {
	switch string(input) {
	case "null", "undefined":
		*p = OptionalInteger{}
		return nil
	}
	var v int64
	if err := json.Unmarshal(input, &v); err != nil {
		return err
	}
	*p = OptionalInteger{&v}
	return nil
}

// WithDefault is the integer, or def when p is nil or null.
func (p *OptionalInteger) WithDefault(def int64) int64 {
	if p.IsDefault() {
		return def
	}
	return *p.value
}

// IsDefault reports whether p is nil or null.
func (p *OptionalInteger) IsDefault() bool { return p == nil || p.value == nil }

// OptionalString is a string or null.
type OptionalString struct{ value *string }

// NewOptionalString returns a set OptionalString.
func NewOptionalString(s string) *OptionalString { return &OptionalString{&s} }

// MarshalJSON writes null or the string.
func (p OptionalString) MarshalJSON() ([]byte, error) {
	if p.value == nil {
		return []byte("null"), nil
	}
	return json.Marshal(*p.value)
}

// UnmarshalJSON accepts null or a string.
func (p *OptionalString) UnmarshalJSON(input []byte) error {
	switch string(input) {
	case "null", "undefined":
		*p = OptionalString{}
		return nil
	}
	var v string
	if err := json.Unmarshal(input, &v); err != nil {
		return err
	}
	*p = OptionalString{&v}
	return nil
}

// WithDefault is the string, or def when p is nil or null.
func (p *OptionalString) WithDefault(def string) string {
	if p.IsDefault() {
		return def
	}
	return *p.value
}

// IsDefault reports whether p is nil or null.
func (p *OptionalString) IsDefault() bool { return p == nil || p.value == nil }

// OptionalBytes is a byte size ("256KiB", or a number) or null; it is
// written back as a string.
type OptionalBytes struct{ OptionalString }

// UnmarshalJSON accepts null, a number or a size string.
func (p *OptionalBytes) UnmarshalJSON(input []byte) error {
	switch string(input) {
	case "null", "undefined":
		*p = OptionalBytes{}
		return nil
	}
	var value any
	if err := json.Unmarshal(input, &value); err != nil {
		return err
	}
	switch v := value.(type) {
	case float64:
		s := fmt.Sprintf("%.0f", v)
		p.value = &s
	case string:
		if _, err := parseBytes(v); err != nil {
			return err
		}
		p.value = &v
	default:
		return fmt.Errorf("unable to parse byte size, expected a size string (e.g., \"5GiB\") or a number, but got %T", v)
	}
	return nil
}

// AutoNATServiceMode is "", "enabled", "disabled" or "legacy-v1".
type AutoNATServiceMode string

// UnmarshalText accepts the four modes.
func (m *AutoNATServiceMode) UnmarshalText(text []byte) error {
	switch string(text) {
	case "", "enabled", "disabled", "legacy-v1":
		*m = AutoNATServiceMode(text)
		return nil
	}
	return fmt.Errorf("unknown autonat mode: %s", string(text))
}

// checkRemoved is for keys Kubo no longer reads: only an empty object
// (or nothing) is accepted, otherwise msg says where the key went.
func checkRemoved(b []byte, msg string) error {
	d := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := d.Token()
		switch {
		case err == io.EOF:
			return nil
		case err != nil:
			return err
		case tok == json.Delim('{') || tok == json.Delim('}'):
			continue
		}
		return errors.New(msg)
	}
}

type swarmLimits bool

func (swarmLimits) UnmarshalJSON(b []byte) error {
	return checkRemoved(b, "The Swarm.ResourceMgr.Limits configuration has been removed in Kubo 0.19 and should be empty or not present. To set custom libp2p limits, read https://github.com/ipfs/kubo/blob/master/docs/libp2p-resource-management.md#user-supplied-override-limits")
}

type experimentalAcceleratedDHTClient bool

func (experimentalAcceleratedDHTClient) UnmarshalJSON(b []byte) error {
	return checkRemoved(b, "The Experimental.AcceleratedDHTClient key has been moved to Routing.AcceleratedDHTClient in Kubo 0.21, please use this new key and remove the old one.")
}

type graphsyncEnabled bool

func (graphsyncEnabled) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "false" {
		return nil
	}
	return checkRemoved(b, "Support for Experimental.GraphsyncEnabled has been removed in Kubo 0.25.0, please remove this key. For more details see https://github.com/ipfs/kubo/pull/9747.")
}

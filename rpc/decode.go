// decode.go: option value conversion and argument binding, with Kubo's
// error texts. Shared by the server and the CLI.

package rpc

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseError is a request the server refuses before running the command:
// it is answered as 400 text/plain.
type ParseError struct{ Msg string }

func (e *ParseError) Error() string { return e.Msg }

func parseErrorf(format string, a ...any) error { return &ParseError{Msg: fmt.Sprintf(format, a...)} }

// ConvertOption turns a raw string into the option's typed value.
func ConvertOption(o Option, raw string) (any, error) {
	conv := func() error {
		if raw == "" {
			return parseErrorf("could not convert empty value to type %q (for option \"-%s\")", o.Type.String(), o.Name())
		}
		return parseErrorf("could not convert value %q to type %q (for option \"-%s\")", raw, o.Type.String(), o.Name())
	}
	switch o.Type {
	case Bool:
		switch strings.ToLower(raw) {
		case "", "1", "t", "true":
			return true, nil
		case "0", "f", "false":
			return false, nil
		}
		return nil, parseErrorf("could not convert value %q to type %q (for option \"-%s\")", raw, "bool", o.Name())
	case Int:
		v, err := strconv.ParseInt(raw, 0, 32)
		if err != nil {
			return nil, conv()
		}
		return int(v), nil
	case Uint:
		v, err := strconv.ParseUint(raw, 0, 32)
		if err != nil {
			return nil, conv()
		}
		return uint(v), nil
	case Int64:
		v, err := strconv.ParseInt(raw, 0, 64)
		if err != nil {
			return nil, conv()
		}
		return v, nil
	case Uint64:
		v, err := strconv.ParseUint(raw, 0, 64)
		if err != nil {
			return nil, conv()
		}
		return v, nil
	case Float:
		v, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return nil, conv()
		}
		return v, nil
	case StringList:
		return []string{raw}, nil
	}
	return raw, nil
}

// findOption finds an option by any of its names.
func findOption(opts []Option, name string) (Option, bool) {
	for _, o := range opts {
		for _, n := range o.Names {
			if n == name {
				return o, true
			}
		}
	}
	return Option{}, false
}

// KV is one query key and value, in order.
type KV struct{ Key, Value string }

// DecodeOptions converts query pairs (other than "arg") into typed options
// keyed by canonical name. Unknown keys are ignored, as Kubo does. Options
// not given get their defaults.
func DecodeOptions(valid []Option, pairs []KV) (map[string]any, error) {
	if len(pairs) == 0 {
		return defaultOptions(valid, map[string]any{}), nil
	}
	raw := map[string][]string{}
	spelled := map[string]string{} // canonical name -> key whose values raw holds
	var order []string
	for _, p := range pairs {
		if p.Key == "arg" {
			continue
		}
		o, ok := findOption(valid, p.Key)
		if !ok {
			continue
		}
		name := o.Name()
		prev, seen := spelled[name]
		switch {
		case !seen:
			order = append(order, name)
			spelled[name] = p.Key
		case prev != p.Key:
			// Two spellings (r=0&recursive=1): one wins, as in Kubo
			// as Kubo: the long name, else the first given.
			if p.Key != name {
				continue
			}
			spelled[name] = p.Key
			raw[name] = nil
		}
		raw[name] = append(raw[name], p.Value)
	}
	out := map[string]any{}
	for _, name := range order {
		o, _ := findOption(valid, name)
		vals := raw[name]
		if o.Type == StringList {
			out[name] = append([]string{}, vals...)
			continue
		}
		if len(vals) > 1 {
			return nil, parseErrorf("expected key %s to have only a single value, received [%s]", name, strings.Join(vals, " "))
		}
		v, err := ConvertOption(o, vals[0])
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return defaultOptions(valid, out), nil
}

// defaultOptions adds to out the defaults of the options it lacks.
func defaultOptions(valid []Option, out map[string]any) map[string]any {
	for _, o := range valid {
		if o.Default == nil {
			continue
		}
		if _, ok := out[o.Name()]; !ok {
			out[o.Name()] = o.Default
		}
	}
	return out
}

// BindArgs applies Kubo's argument rules to the string values given for
// cmd: it drops surplus values of non-variadic commands and reports which
// definition is still missing. bodyLines are lines from the first multipart
// part (nil if none); hasFiles says whether the request has a multipart body at all.
func BindArgs(cmd *Command, values, bodyLines []string, hasFiles bool) ([]string, error) {
	defs := cmd.Args
	var out []string
	vi := 0
	requiredLeft := func(from int) int {
		n := 0
		for _, d := range defs[from:] {
			if d.Required && d.Kind == ArgString {
				n++
			}
		}
		return n
	}
	missing := ""
	for di, d := range defs {
		if d.Kind == ArgFile {
			if d.Required && !hasFiles {
				return nil, parseErrorf("file argument '%s' is required", d.Name)
			}
			continue
		}
		remaining := len(values) - vi
		if !d.Required && remaining <= requiredLeft(di+1) {
			continue
		}
		if remaining <= 0 {
			if d.Required && missing == "" {
				missing = d.Name
			}
			if !d.Variadic {
				// Kubo stops at the first string argument it lacks, so
				// files/write with neither says `argument "path" is
				// required`, not the file's error.
				break
			}
			continue
		}
		if d.Variadic {
			out = append(out, values[vi:]...)
			vi = len(values)
			continue
		}
		out = append(out, values[vi])
		vi++
	}
	if len(defs) > 0 {
		last := defs[len(defs)-1]
		if last.Kind == ArgString && last.Stdin && bodyLines != nil {
			if cmd.BodyArgs || last.Variadic {
				out = append(out, bodyLines...)
				if len(bodyLines) > 0 {
					missing = ""
				}
			} else if missing != "" && len(bodyLines) > 0 {
				out = append(out, bodyLines[0])
				missing = ""
			}
		}
	}
	if missing != "" {
		return nil, parseErrorf("argument %q is required", missing)
	}
	if cmd.SurplusArgs {
		for ; vi < len(values); vi++ {
			out = append(out, "")
		}
	}
	return out, nil
}

// takesBodyArgs reports whether cmd reads argument lines from the body
// (its last argument is a stdin string argument and it has no file one).
func takesBodyArgs(cmd *Command) bool {
	if len(cmd.Args) == 0 {
		return false
	}
	for _, a := range cmd.Args {
		if a.Kind == ArgFile {
			return false
		}
	}
	last := cmd.Args[len(cmd.Args)-1]
	return last.Kind == ArgString && last.Stdin
}

// hasFileArg reports whether cmd takes multipart files.
func hasFileArg(cmd *Command) bool {
	for _, a := range cmd.Args {
		if a.Kind == ArgFile {
			return true
		}
	}
	return false
}

// SplitBodyLines splits the first part's text into argument lines: a
// trailing \r is stripped and a last line without newline counts.
func SplitBodyLines(b []byte) []string {
	s := string(b)
	if s == "" {
		return []string{}
	}
	s = strings.TrimSuffix(s, "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// diag.go: the "diag" family: diag/sys.

package httprpc

import (
	"encoding/json"
)

var diagCommands = []*Command{{
	Path:     "diag/sys",
	Synopsis: "Print system diagnostic information.",
	Help:     `Prints out information about your computer to aid in easier debugging.`,
	Output:   OutSingle,
	Run:      runDiagSys,
	Type:     func() any { return &map[string]any{} },
	Text: func(t *TextEnv, v any) error {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = t.Out.Write(append(b, '\n'))
		return err
	},
}}

func runDiagSys(r *Request, e Emitter) error {
	info, err := r.Node.SysInfo()
	if err != nil {
		return err
	}
	info["ipfs_version"] = Version
	info["ipfs_commit"] = Commit
	return e.Emit(info)
}

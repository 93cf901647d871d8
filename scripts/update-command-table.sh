#!/usr/bin/env bash
# Regenerates the command table between the markers in docs/commands.md
# (GO names the go command, default go).
set -euo pipefail
cd "$(dirname "$0")/.."
table=$(${GO:-go} run ./scripts/cmdtable)
python3 - "$table" <<'PY'
import sys
t = sys.argv[1] + "\n"
f = "docs/commands.md"
s = open(f).read()
b, e = "<!-- commands:begin -->\n", "<!-- commands:end -->"
i, j = s.index(b), s.index(e)
open(f, "w").write(s[:i+len(b)] + t + s[j:])
PY

#!/usr/bin/env bash
# Regenerates the command table between the markers in README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
table=$(go run ./scripts/cmdtable)
python3 - "$table" <<'PY'
import sys
t = sys.argv[1] + "\n"
s = open("README.md").read()
b, e = "<!-- commands:begin -->\n", "<!-- commands:end -->"
i, j = s.index(b), s.index(e)
open("README.md", "w").write(s[:i+len(b)] + t + s[j:])
PY

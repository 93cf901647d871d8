#!/usr/bin/env bash
# Fails when a tracked file is an executable binary (ELF) or larger than
# 2 MiB, unless it is listed in scripts/large-files.txt (fixtures that must
# be bigger, one path per line with the reason after a #). Build outputs
# belong in .gitignore, not in the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=$((2 * 1024 * 1024))
allowed=$(sed -e 's/#.*//' -e 's/[[:space:]]*$//' scripts/large-files.txt 2>/dev/null | grep -v '^$' || true)
bad=0
while IFS= read -r -d '' f; do
	[ -f "$f" ] || continue
	if grep -qxF -- "$f" <<<"$allowed"; then continue; fi
	if [ "$(head -c 4 "$f" | od -An -tx1 | tr -d ' \n')" = "7f454c46" ]; then
		echo "tracked binary (ELF): $f" >&2
		bad=1
	fi
	size=$(stat -c %s "$f")
	if [ "$size" -gt "$limit" ]; then
		echo "tracked file over 2 MiB ($size bytes): $f (list it in scripts/large-files.txt if it must be this big)" >&2
		bad=1
	fi
done < <(git ls-files -z)
if [ "$bad" -ne 0 ]; then exit 1; fi
echo "tracked files: no binaries, none over 2 MiB"

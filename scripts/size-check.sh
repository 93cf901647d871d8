#!/usr/bin/env bash
# size-check.sh: fail when a dist/ binary is larger than its budget in
# scripts/size-budget.txt (bytes). Raise a budget only in a commit that
# says what grew and why.
#
#   scripts/size-check.sh [dist]
set -euo pipefail
cd "$(dirname "$0")/.."
DIST=${1:-dist}
BUDGET=scripts/size-budget.txt

fail=0
checked=0
while read -r name limit _; do
	case "$name" in ''|'#'*) continue ;; esac
	case "$limit" in '' | *[!0-9]* | 0)
		echo "size-check: $BUDGET: bad budget '$limit' for $name" >&2
		exit 1
		;;
	esac
	f="$DIST/$name"
	[ -f "$f" ] || continue
	size=$(stat -c %s "$f")
	checked=$((checked + 1))
	pct=$((size * 100 / limit))
	if [ "$size" -gt "$limit" ]; then
		echo "size-check: $name is $size bytes, over its budget of $limit ($pct%)" >&2
		fail=1
	else
		echo "size-check: $name $size / $limit bytes ($pct% of budget)"
	fi
done <"$BUDGET"
if [ "$checked" -eq 0 ]; then
	echo "size-check: no binaries from $BUDGET found in $DIST (run make cross)" >&2
	exit 1
fi
exit $fail

#!/usr/bin/env bash
# Installs what the test suite needs beyond Go: Debian's chromium, for the
# headless-browser tests of the status app (modules/status) and of the
# gateway (tests/gateway_browser_test.go). Safe to run twice. Without
# chromium those tests are skipped with a printed reason.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
	echo "chromium already installed: $(command -v chromium)"
	exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends chromium
command -v chromium

#!/usr/bin/env bash
# The browser the console's tests drive: Debian's chromium and its chromedriver. Does nothing when
# both are installed; installs them with apt-get when run as root; otherwise says what to run.
set -euo pipefail
if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "browser: installing chromium and chromium-driver with apt-get (once, for the console's browser tests) ..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends chromium chromium-driver fonts-liberation >/dev/null
  if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    exit 0
  fi
  echo "error: chromium and chromedriver are still missing after apt-get install, /usr/bin/chromium or /usr/bin/chromedriver is not there, check \`apt-cache policy chromium chromium-driver\`" >&2
  exit 1
fi
echo "error: the console's browser tests need chromium and chromedriver, /usr/bin/chromium or /usr/bin/chromedriver is missing, run \`sudo apt-get install chromium chromium-driver\` (or \`sudo bash installer/browser.sh\`)" >&2
exit 1

#!/usr/bin/env bash
# Debian packages the test suite needs: a virtual screen with a tray host (tray tests),
# Chromium (extension end-to-end tests), a Secret Service (keyring tests), image tools, the
# desktop-entry and AppStream validators (packaging tests), strace (crash injection at exact
# system calls, the no-network test), Syncthing (sync tests), and binutils and curl (the bundle's
# build and smoke test, which CI runs after the tests).
# Installs only when something is missing, so running it again is quick.
set -euo pipefail
PACKAGES=(
  xvfb xauth libxkbcommon0 libegl1 libgl1 libglib2.0-0 libfontconfig1 libdbus-1-3 libxkbcommon-x11-0
  libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0 libxcb-randr0 libxcb-render-util0
  libxcb-image0 libxcb-xinerama0 libxcb-xkb1 trayer xdotool imagemagick
  chromium gnome-keyring dbus dbus-x11 fonts-dejavu-core
  desktop-file-utils appstream
  strace syncthing
  binutils curl
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "installing system packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

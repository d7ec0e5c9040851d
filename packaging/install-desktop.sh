#!/usr/bin/env bash
# Install (or remove) Vodou's menu entry, icons and AppStream metadata for the current user.
#   packaging/install-desktop.sh install | uninstall
# Files go under ${XDG_DATA_HOME:-~/.local/share}. The entry runs $VODOU_BIN when set, else the
# `vodou` found on PATH, else this checkout's .venv/bin/vodou.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
data="${XDG_DATA_HOME:-$HOME/.local/share}"
app_id="io.vodou.Desktop"
sizes=(16 22 32 48 64 128)

installed_files() {
  echo "$data/applications/vodou.desktop"
  echo "$data/metainfo/$app_id.metainfo.xml"
  for n in "${sizes[@]}"; do echo "$data/icons/hicolor/${n}x${n}/apps/vodou.png"; done
  echo "$data/icons/hicolor/scalable/apps/vodou.svg"
}

refresh_caches() {
  # Menus and icon themes watch these folders' times; no per-user cache file is written.
  touch "$data/applications" "$data/icons/hicolor" 2>/dev/null || true
}

vodou_bin() {
  if [ -n "${VODOU_BIN:-}" ]; then echo "$VODOU_BIN"
  elif command -v vodou >/dev/null; then command -v vodou
  elif [ -x "$root/.venv/bin/vodou" ]; then echo "$root/.venv/bin/vodou"
  else echo "vodou"; fi
}

case "${1:-}" in
  install)
    bin="$(vodou_bin)"
    # Exec quoting (Desktop Entry spec): in double quotes, " ` $ take one backslash and a backslash
    # takes four (the string escape applies before the quoting rule).
    quoted="\"$(printf '%s' "$bin" | sed -e 's/\\/\\\\\\\\/g' -e 's/["`$]/\\\\&/g')\""
    install -d "$data/applications" "$data/metainfo" "$data/icons/hicolor/scalable/apps"
    while IFS= read -r line; do
      case "$line" in
        Exec=vodou) printf 'Exec=%s\n' "$quoted" ;;
        TryExec=vodou) printf 'TryExec=%s\n' "$bin" ;;
        *) printf '%s\n' "$line" ;;
      esac
    done < "$here/vodou.desktop" > "$data/applications/vodou.desktop"
    install -m 0644 "$here/$app_id.metainfo.xml" "$data/metainfo/$app_id.metainfo.xml"
    for n in "${sizes[@]}"; do
      install -D -m 0644 "$root/resources/icons/vodou-$n.png" "$data/icons/hicolor/${n}x${n}/apps/vodou.png"
    done
    install -m 0644 "$root/resources/icons/vodou.svg" "$data/icons/hicolor/scalable/apps/vodou.svg"
    refresh_caches
    echo "installed the Vodou menu entry under $data (runs $bin)"
    ;;
  uninstall)
    while read -r f; do rm -f "$f"; done < <(installed_files)
    refresh_caches
    echo "removed the Vodou menu entry, icons and metadata from $data"
    ;;
  *)
    echo "usage: $0 install|uninstall" >&2
    exit 2
    ;;
esac

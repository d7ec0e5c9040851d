#!/usr/bin/env bash
# Build a release into DIST (default dist/): packaging/release.sh PYTHON DIST
#   vodou_desktop-VERSION-py3-none-any.whl     the wheel
#   vodou-VERSION-linux-ARCH.tar.zst           the PyInstaller bundle (smoke-tested first), with
#                                              LICENSE and THIRD_PARTY_NOTICES at its top
#   vodou-extension-VERSION.zip                the browser extension for a store upload
#   SHA256SUMS                                 checksums of the three, checked after writing
# PYTHON is the venv's interpreter with Vodou's dependencies and PyInstaller installed (make release
# does both). zstd comes from the system (Debian: apt-get install zstd).
set -euo pipefail
py="${1:?usage: release.sh PYTHON DIST}"
dist="${2:?usage: release.sh PYTHON DIST}"
cd "$(dirname "$0")/.."
command -v zstd >/dev/null || { echo "release: zstd is not installed (Debian: apt-get install zstd)" >&2; exit 1; }
version="$("$py" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')"
arch="$(uname -m)"
wheel="vodou_desktop-$version-py3-none-any.whl"
tarball="vodou-$version-linux-$arch.tar.zst"
zip="vodou-extension-$version.zip"
mkdir -p "$dist"
rm -f "$dist/$wheel" "$dist/$tarball" "$dist/$zip" "$dist/SHA256SUMS"

echo "release: checking THIRD_PARTY_NOTICES against the installed distributions"
"$py" packaging/third_party_notices.py --check

echo "release: the wheel"
"$py" -m build --wheel --outdir "$dist" . >/dev/null

echo "release: the extension zip"
"$py" packaging/extension_zip.py "$dist" >/dev/null

echo "release: the bundle (PyInstaller; slow) and its smoke test"
"$py" -m PyInstaller --noconfirm --log-level WARN --distpath "$dist" --workpath build/pyinstaller packaging/vodou.spec
install -m 0644 LICENSE "$dist/vodou/LICENSE"
"$py" packaging/third_party_notices.py --bundle -o "$dist/vodou/THIRD_PARTY_NOTICES" >/dev/null
bash packaging/smoke-bundle.sh "$dist/vodou"
grep -q "PyInstaller bootloader" <("$dist/vodou/vodou" --licences) || { echo "release: the bundle's --licences lacks its own notices" >&2; exit 1; }
tar -C "$dist" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - vodou | zstd -q -T0 -9 -o "$dist/$tarball"

(cd "$dist" && sha256sum "$wheel" "$tarball" "$zip" > SHA256SUMS && sha256sum --quiet -c SHA256SUMS)
echo "release: $dist/{$wheel,$tarball,$zip,SHA256SUMS}"
ls -l "$dist/$wheel" "$dist/$tarball" "$dist/$zip" "$dist/SHA256SUMS"

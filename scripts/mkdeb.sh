#!/usr/bin/env bash
# mkdeb.sh BUILD_DIR OUT_DIR — packs a built jobd tree into
# OUT_DIR/jobd_VERSION_ARCH.deb with dpkg-deb (no debhelper: one binary
# package, every control file in packaging/deb/). `make deb` runs it on a
# Release build configured for /usr; tests/integration/test_deb.sh on the
# test build. The tree is installed with --prefix /usr (configs to /etc/jobd,
# marked as conffiles), man pages and changelog compressed as Debian wants,
# binaries stripped, Depends computed by dpkg-shlibdeps (with the libraries
# jobd loads on first use), and libjobd's shlibs and ldconfig trigger declared.
set -euo pipefail
build=$(cd "${1:?usage: mkdeb.sh BUILD_DIR OUT_DIR}" && pwd)
out=$(mkdir -p "${2:?usage: mkdeb.sh BUILD_DIR OUT_DIR}" && cd "$2" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
pkg="$src/packaging/deb"
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
[ -n "$version" ] || { echo "mkdeb: no project version in $build/CMakeCache.txt" >&2; exit 1; }
arch=$(dpkg --print-architecture)
work=$(mktemp -d /tmp/jobd-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
root="$work/root"

DESTDIR="$root" cmake --install "$build" --prefix /usr >"$work/install.log" 2>&1 ||
    { cat "$work/install.log" >&2; exit 1; }
# Debian's shape: compressed man pages and changelog, stripped binaries.
find "$root/usr/share/man" -type f -exec gzip -9n {} +
doc="$root/usr/share/doc/jobd"
install -m 0644 "$pkg/copyright" "$doc/copyright"
printf 'jobd (%s) unstable; urgency=medium\n\n  * Built from the jobd source tree by make deb.\n\n -- jobd maintainers <jobd-maintainers@example.org>  %s\n' \
    "$version" "$(date -R -d @"${SOURCE_DATE_EPOCH:-$(date +%s)}")" | gzip -9n >"$doc/changelog.gz"
lib=$(find "$root/usr/lib" -name 'libjobd.so.*.*' -type f)
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/jobd" "$lib"
chmod 0644 "$lib"
find "$root" -type d -exec chmod 0755 {} +

mkdir -p "$root/DEBIAN"
# dpkg-shlibdeps wants a debian/control beside it; libjobd itself is ours.
mkdir -p "$work/debian"
printf 'Source: jobd\n\nPackage: jobd\nArchitecture: any\n' >"$work/debian/control"
# jobd_lazydeps links what jobd dlopens on first use (libpq, libcurl,
# libmicrohttpd, SQLite: cmake/lazylibs.cmake), which jobd's own ELF does not name.
[ -x "$build/jobd_lazydeps" ] || { echo "mkdeb: $build/jobd_lazydeps is not built" >&2; exit 1; }
deps=$(cd "$work" && dpkg-shlibdeps -O -l"$(dirname "$lib")" "$root/usr/bin/jobd" "$lib" \
       "$build/jobd_lazydeps" 2>/dev/null |
       sed -n 's/^shlibs:Depends=//p')
[ -n "$deps" ] || { echo "mkdeb: dpkg-shlibdeps found no dependency" >&2; exit 1; }
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" \
    -e "s/@DEPENDS@/$deps/" "$pkg/control.in" >"$root/DEBIAN/control"
(cd "$root" && find etc -type f | sed 's|^|/|' | sort) >"$root/DEBIAN/conffiles"
echo "libjobd 0 jobd (>= $version)" >"$root/DEBIAN/shlibs"
echo "activate-noawait ldconfig" >"$root/DEBIAN/triggers"
install -m 0755 "$pkg/postinst" "$pkg/postrm" "$root/DEBIAN/"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/conffiles" "$root/DEBIAN/shlibs" "$root/DEBIAN/triggers"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z |
    xargs -0 md5sum) >"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/md5sums"

deb="$out/jobd_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"

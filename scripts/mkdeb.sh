#!/usr/bin/env bash
# mkdeb.sh BUILD_DIR OUT_DIR — packs a built jobd tree into three Debian
# packages with dpkg-deb (no debhelper; every control file in
# packaging/deb/), split as Debian splits a program with a library:
#   OUT_DIR/jobd_VERSION_ARCH.deb         the binary, units, configs, man pages,
#                                         completion, docs and examples
#   OUT_DIR/libjobd0_VERSION_ARCH.deb     libjobd.so.0 (shlibs, symbols, ldconfig)
#   OUT_DIR/libjobd-dev_VERSION_ARCH.deb  jobd.h, libjobd.so, jobd.pc, C examples
# and prints their paths, one a line, jobd's first. `make deb` runs it on a
# Release build configured for /usr; tests/integration/test_deb.sh on the test
# build. The tree is installed with --prefix /usr (configs to /etc/jobd,
# marked as conffiles), libjobd moved to the multiarch folder, man pages,
# changelog and long docs compressed as Debian wants, binaries stripped,
# Depends computed by dpkg-shlibdeps (with the libraries jobd loads on first
# use). docs/OPERATIONS.md, Install.
set -euo pipefail
build=$(cd "${1:?usage: mkdeb.sh BUILD_DIR OUT_DIR}" && pwd)
out=$(mkdir -p "${2:?usage: mkdeb.sh BUILD_DIR OUT_DIR}" && cd "$2" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
pkg="$src/packaging/deb"
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
[ -n "$version" ] || { echo "mkdeb: no project version in $build/CMakeCache.txt" >&2; exit 1; }
arch=$(dpkg --print-architecture)
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)
work=$(mktemp -d /tmp/jobd-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
stage="$work/stage"
date=$(date -R -d @"${SOURCE_DATE_EPOCH:-$(date +%s)}")

DESTDIR="$stage" cmake --install "$build" --prefix /usr >"$work/install.log" 2>&1 ||
    { cat "$work/install.log" >&2; exit 1; }

# libjobd where Debian puts libraries: /usr/lib/TRIPLET (a build configured
# for /usr already has it there), jobd.pc naming /usr.
libdir="$stage/usr/lib/$ma"
mkdir -p "$libdir/pkgconfig"
for f in "$stage"/usr/lib/libjobd.so* "$stage/usr/lib/pkgconfig/jobd.pc"; do
    [ -e "$f" ] || [ -L "$f" ] || continue
    mv "$f" "$libdir/${f#"$stage/usr/lib/"}"
done
rmdir "$stage/usr/lib/pkgconfig" 2>/dev/null || true
sed -i -e 's|^prefix=.*|prefix=/usr|' -e "s|^libdir=.*|libdir=\${prefix}/lib/$ma|" \
    -e 's|^includedir=.*|includedir=${prefix}/include|' -e '/^#/d' \
    -e '1i # jobd.pc — pkg-config metadata for libjobd, as the Debian package installs it.' \
    "$libdir/pkgconfig/jobd.pc"
lib=$(find "$libdir" -name 'libjobd.so.*.*' -type f)
[ -n "$lib" ] || { echo "mkdeb: libjobd.so.* was not installed" >&2; exit 1; }
soname=$(objdump -p "$lib" | sed -n 's/^ *SONAME *//p')

# Debian's shape: stripped binaries, compressed man pages and docs over 4 KiB
# (examples stay as they are: they are run).
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$stage/usr/bin/jobd" "$lib"
chmod 0644 "$lib"
find "$stage/usr/share/man" -type f -exec gzip -9n {} +
find "$stage/usr/share/doc/jobd" -maxdepth 1 -type f -size +4k -exec gzip -9n {} +

# The three roots: each file of the stage goes to exactly one.
declare -A root=([jobd]="$work/jobd" [libjobd0]="$work/libjobd0" [libjobd-dev]="$work/libjobd-dev")
move() { # move PACKAGE PATH... (paths relative to the stage)
    local p=$1 f
    shift
    for f in "$@"; do
        mkdir -p "$(dirname "${root[$p]}/$f")"
        mv "$stage/$f" "${root[$p]}/$f"
    done
}
rel=${libdir#"$stage/"}
move libjobd0 "$rel/$soname" "$rel/$(basename "$lib")"
move libjobd-dev "$rel/libjobd.so" "$rel/pkgconfig/jobd.pc" usr/include/jobd.h \
    usr/share/doc/jobd/examples/hello.c usr/share/doc/jobd/examples/c_worker.c
mkdir -p "$work/libjobd-dev/usr/share/doc/libjobd-dev"
mv "$work/libjobd-dev/usr/share/doc/jobd/examples" "$work/libjobd-dev/usr/share/doc/libjobd-dev/"
rm -r "$work/libjobd-dev/usr/share/doc/jobd"
find "$stage" -depth -type d -empty -delete
mkdir -p "$work/jobd"
(cd "$stage" && tar -cf - .) | (cd "$work/jobd" && tar -xf -)

# dpkg-shlibdeps wants a debian/control beside it. jobd_lazydeps links what
# jobd and libjobd dlopen on first use (libpq, libcurl, libmicrohttpd, SQLite:
# cmake/lazylibs.cmake), which their own ELF files do not name.
mkdir -p "$work/debian"
printf 'Source: jobd\n\nPackage: jobd\nArchitecture: any\n' >"$work/debian/control"
[ -x "$build/jobd_lazydeps" ] || { echo "mkdeb: $build/jobd_lazydeps is not built" >&2; exit 1; }
shlibdeps() {
    (cd "$work" && dpkg-shlibdeps -O "$@" "$build/jobd_lazydeps" 2>/dev/null) |
        sed -n 's/^shlibs:Depends=//p'
}
deps_jobd=$(shlibdeps "$work/jobd/usr/bin/jobd")
deps_lib=$(shlibdeps "${root[libjobd0]}/$rel/$(basename "$lib")")
[ -n "$deps_jobd" ] && [ -n "$deps_lib" ] ||
    { echo "mkdeb: dpkg-shlibdeps found no dependency" >&2; exit 1; }

for p in jobd libjobd0 libjobd-dev; do
    r=${root[$p]}
    doc="$r/usr/share/doc/$p"
    mkdir -p "$doc" "$r/DEBIAN"
    install -m 0644 "$pkg/copyright" "$doc/copyright"
    printf '%s (%s) unstable; urgency=medium\n\n  * Built from the jobd source tree by make deb.\n\n -- jobd maintainers <jobd-maintainers@example.org>  %s\n' \
        jobd "$version" "$date" | gzip -9n >"$doc/changelog.gz"
done
install -D -m 0644 "$pkg/jobd.lintian-overrides" "$work/jobd/usr/share/lintian/overrides/jobd"

# libjobd0: how other packages depend on it (shlibs, symbols) and ldconfig.
r=${root[libjobd0]}
echo "${soname%%.so.*} ${soname##*.so.} libjobd0 (>= $version)" >"$r/DEBIAN/shlibs"
{
    echo "$soname libjobd0 #MINVER#"
    echo "* Build-Depends-Package: libjobd-dev"
    nm -D --defined-only "$r/$rel/$(basename "$lib")" | awk '$2 ~ /^[TDRBVW]$/ {print $3}' |
        sort -u | sed "s/\$/@Base $version/; s/^/ /"
} >"$r/DEBIAN/symbols"
echo "activate-noawait ldconfig" >"$r/DEBIAN/triggers"
# jobd: its conffiles and maintainer scripts.
r=${root[jobd]}
(cd "$r" && find etc -type f | sed 's|^|/|' | sort) >"$r/DEBIAN/conffiles"
install -m 0755 "$pkg/postinst" "$pkg/postrm" "$r/DEBIAN/"

declare -A depends=([jobd]="adduser, $deps_jobd" [libjobd0]="$deps_lib"
                    [libjobd-dev]="libjobd0 (= $version)")
for p in jobd libjobd0 libjobd-dev; do
    r=${root[$p]}
    find "$r" -type d -exec chmod 0755 {} +
    size=$(du -sk --exclude=DEBIAN "$r" | cut -f1)
    sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" \
        -e "s/@DEPENDS@/${depends[$p]}/" "$pkg/$p.control" >"$r/DEBIAN/control"
    (cd "$r" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z |
        xargs -0 md5sum) >"$r/DEBIAN/md5sums"
    find "$r/DEBIAN" -type f ! -name postinst ! -name postrm -exec chmod 0644 {} +
    deb="$out/${p}_${version}_${arch}.deb"
    dpkg-deb --root-owner-group -Zxz --build "$r" "$deb" >/dev/null
    echo "$deb"
done

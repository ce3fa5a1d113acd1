#!/usr/bin/env bash
# Builds rqps's packages for this machine's architecture into dist/:
#
#   dist/rqps_VERSION_ARCH.deb                  a Debian package (dpkg-deb)
#   dist/rqps-VERSION-MACHINE-linux-gnu.tar.gz  the binary, its man pages, bash/zsh/fish
#                                               completions, the README, docs/, examples/
#                                               and the licence files
#   dist/SHA256SUMS
#
# Both carry what the README, the man pages and `rqps help` point to: README.md, docs/ and
# examples/ (in /usr/share/doc/rqps/ from the .deb). Every file time in both is the last
# commit's time ($SOURCE_DATE_EPOCH when set, 0 outside a git checkout), so the same commit
# packs to the same bytes.
#
# Usage: scripts/package.sh          (builds with `cargo build --release --locked`)
#        RQPS_BIN=path scripts/package.sh   (packages a binary built already)
#
# The .deb is put together with dpkg-deb, which every Debian system has, rather than
# cargo-deb: building cargo-deb itself would cost more than the whole rqps build here,
# and the package is a binary plus files that rqps generates (`rqps man`, `rqps
# completions`). The binary links only glibc (and libgcc_s, which every glibc system
# has); the script fails if it needs a glibc newer than 2.34, so the packages run on
# any current Linux (Debian 12, Ubuntu 22.04, RHEL 9 and later).
set -euo pipefail
cd "$(dirname "$0")/.."

max_glibc=2.34
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
arch=$(dpkg --print-architecture 2>/dev/null || uname -m)
machine=$(uname -m)

# One time for every file of both packages (reproducible builds).
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
    SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || echo 0)
fi
export SOURCE_DATE_EPOCH

bin=${RQPS_BIN:-}
if [ -z "$bin" ]; then
    start=$(date +%s)
    cargo build --release --locked
    echo "package: release build took $(($(date +%s) - start)) s"
    bin=target/release/rqps
fi
[ -x "$bin" ] || { echo "package: no executable at $bin" >&2; exit 1; }

# What the binary needs from the system.
needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
for lib in $needed; do
    case "$lib" in
        libc.so.6 | libm.so.6 | libdl.so.2 | libpthread.so.0 | librt.so.1 | ld-linux*.so.* | libgcc_s.so.1) ;;
        *) echo "package: $bin needs $lib, which is not part of glibc" >&2; exit 1 ;;
    esac
done
glibc=$(objdump -T "$bin" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
if [ "$(printf '%s\n%s\n' "$glibc" "$max_glibc" | sort -V | tail -1)" != "$max_glibc" ]; then
    echo "package: $bin needs glibc $glibc; build it on a system with glibc $max_glibc" >&2
    exit 1
fi
echo "package: $bin needs $needed(glibc $glibc at most)"

rm -rf dist/stage
mkdir -p dist/stage
stage=dist/stage
# Without its debug info (86 MB -> 14 MB with Rust 1.95; compressing it took minutes), but
# with its symbols, so that `--cpu-profile` still names rqps's own functions.
objcopy --strip-debug "$bin" "$stage/rqps"
bin=$stage/rqps

# Man pages: rqps(1) and one per command at every depth (rqps-run(1),
# rqps-engine-install(1), ...), as rqps generates them.
"$bin" man --dir "$stage/man" >/dev/null
# Completions: clap's registration scripts, which ask the rqps on PATH for candidates.
mkdir -p "$stage/completions"
"$bin" completions bash > "$stage/completions/rqps.bash"
"$bin" completions zsh > "$stage/completions/_rqps"
"$bin" completions fish > "$stage/completions/rqps.fish"

# The documents the README links to, as the README sees them: README.md, docs/ and
# examples/ side by side (the matrices' relative paths, examples/configs/..., hold there).
docs="$stage/docs-tree"
mkdir -p "$docs"
cp README.md "$docs/"
cp -r docs examples "$docs/"
find "$docs" -type d -exec chmod 755 {} + && find "$docs" -type f -exec chmod 644 {} +

# The tarball: rqps-VERSION-MACHINE-linux-gnu/{rqps, man/, completions/, README.md, docs/,
# examples/, LICENSE-*}.
name="rqps-$version-$machine-linux-gnu"
tree="$stage/$name"
mkdir -p "$tree"
install -m 755 "$bin" "$tree/rqps"
cp -r "$stage/man" "$stage/completions" "$tree/"
cp -r "$docs"/. "$tree/"
cp LICENSE-MIT LICENSE-APACHE "$tree/"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
    -C "$stage" -cf - "$name" | gzip -9n > "dist/$name.tar.gz"

# The Debian package.
root="$stage/deb"
install -D -m 755 "$bin" "$root/usr/bin/rqps"
mkdir -p "$root/usr/share/man/man1"
for page in "$stage"/man/*.1; do
    gzip -9n < "$page" > "$root/usr/share/man/man1/$(basename "$page").gz"
done
install -D -m 644 "$stage/completions/rqps.bash" "$root/usr/share/bash-completion/completions/rqps"
install -D -m 644 "$stage/completions/_rqps" "$root/usr/share/zsh/vendor-completions/_rqps"
install -D -m 644 "$stage/completions/rqps.fish" "$root/usr/share/fish/vendor_completions.d/rqps.fish"
doc="$root/usr/share/doc/rqps"
mkdir -p "$doc"
cp -r "$docs"/. "$doc/"
{
    echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
    echo "Upstream-Name: rqps"
    echo
    echo "Files: *"
    echo "Copyright: the rqps developers"
    echo "License: MIT or Apache-2.0"
    echo " rqps may be used under the terms of either licence."
    echo " The Apache License 2.0 is in /usr/share/common-licenses/Apache-2.0."
    echo " The MIT licence:"
    sed 's/^$/./; s/^/ /' LICENSE-MIT
} > "$doc/copyright"
depends="libc6 (>= $glibc)"
case " $needed" in *" libgcc_s.so.1 "*) depends="$depends, libgcc-s1" ;; esac
mkdir -p "$root/DEBIAN"
cat > "$root/DEBIAN/control" <<EOF
Package: rqps
Version: $version
Architecture: $arch
Maintainer: ${DEB_MAINTAINER:-rqps developers <rqps@invalid>}
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $depends
Suggests: postgresql, mariadb-server, maven, librocksdb7.8 | librocksdb-dev, sysbench, linux-perf
Section: database
Priority: optional
Description: database benchmark and regression finder
 rqps runs the field's standard database benchmarks (sysbench microbenchmarks,
 Insert Benchmark, LinkBench, TPC-C, db_bench, pgbench scripts) against SQLite,
 MariaDB/MySQL, PostgreSQL and RocksDB, keeps every result with its context,
 and reports relative throughput with verdicts that tell a regression from noise.
EOF
deb="dist/rqps_${version}_$arch.deb"
# Every file's time is the commit's, not the build's.
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
# gzip: 5.7 MB in 2 s; xz would save 1.4 MB for 28 s on a busy 2-core CI machine.
dpkg-deb --root-owner-group -Zgzip --build "$root" "$deb" >/dev/null

rm -rf "$stage"
(cd dist && sha256sum "$(basename "$deb")" "$name.tar.gz" > SHA256SUMS)
ls -l "$deb" "dist/$name.tar.gz"

#!/bin/sh
# Installs `holm` and `holmd`.
#
#   curl -fsSL https://raw.githubusercontent.com/holm-inc/holm/main/scripts/install.sh | HOLM_INSTALL_DIR=/usr/local/bin sh
#
# Where the programs come from, in this order:
#   HOLM_ARCHIVE=FILE      a release archive on this machine (.tar.gz holding
#                          holm and holmd, at its top or in one directory):
#                          no network is needed
#   HOLM_BUILD_DIR=DIR     a build's output, such as target/release
#   otherwise              the release archive for this machine, downloaded
#                          from HOLM_RELEASE_URL (default: the GitHub release
#                          HOLM_VERSION, default latest)
#
# The archive's SHA-256 is checked before it is unpacked, and a mismatch
# stops the script before anything is written:
#   HOLM_SHA256=HEX        the SHA-256 the archive must have (from the release
#                          page, or your own record); checked for HOLM_ARCHIVE
#                          when set, and for a download always when set
#   otherwise, a download  is checked against the release's <archive>.sha256,
#                          fetched from beside it; a download with neither is
#                          refused
#
# HOLM_INSTALL_DIR (default /usr/local/bin) is made if missing. Each program
# is written next to its place and renamed over it, so a running holmd keeps
# its old file and a restart takes the new one.
set -eu

dir="${HOLM_INSTALL_DIR:-/usr/local/bin}"
version="${HOLM_VERSION:-latest}"
arch="$(uname -m)"

say() { printf 'holm install: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# Fetches $1 into the file $2.
fetch() {
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL "$1" -o "$2"
  elif command -v wget >/dev/null 2>&1; then
    wget -q "$1" -O "$2"
  else
    die "neither curl nor wget is installed; set HOLM_ARCHIVE to a downloaded archive"
  fi
}

# Stops unless the file $1 has the SHA-256 $2 (hex, any case).
check_sha256() {
  command -v sha256sum >/dev/null 2>&1 || die "sha256sum is missing: cannot check $1"
  want="$(printf '%s' "$2" | tr 'A-F' 'a-f')"
  case "$want" in
    *[!0-9a-f]*|'') die "the expected SHA-256 '$2' is not 64 hex digits" ;;
  esac
  [ "${#want}" -eq 64 ] || die "the expected SHA-256 '$2' is not 64 hex digits"
  got="$(sha256sum "$1" | cut -d' ' -f1)"
  [ "$got" = "$want" ] || die "checksum mismatch for $3: SHA-256 $got, expected $want; nothing was installed"
  say "SHA-256 of $3 checked: $got"
}

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT INT TERM

if [ -n "${HOLM_ARCHIVE:-}" ]; then
  [ -f "$HOLM_ARCHIVE" ] || die "HOLM_ARCHIVE=$HOLM_ARCHIVE is not a file"
  if [ -n "${HOLM_SHA256:-}" ]; then
    check_sha256 "$HOLM_ARCHIVE" "$HOLM_SHA256" "$HOLM_ARCHIVE"
  fi
  tar -xzf "$HOLM_ARCHIVE" -C "$work" || die "cannot unpack $HOLM_ARCHIVE"
  from="$work"
elif [ -n "${HOLM_BUILD_DIR:-}" ]; then
  [ -d "$HOLM_BUILD_DIR" ] || die "HOLM_BUILD_DIR=$HOLM_BUILD_DIR is not a directory"
  from="$HOLM_BUILD_DIR"
else
  case "$version" in
    latest) base="https://github.com/holm-inc/holm/releases/latest/download" ;;
    *) base="https://github.com/holm-inc/holm/releases/download/$version" ;;
  esac
  url="${HOLM_RELEASE_URL:-$base/holm-$arch-linux.tar.gz}"
  say "downloading $url"
  fetch "$url" "$work/holm.tar.gz" || die "cannot download $url"
  if [ -n "${HOLM_SHA256:-}" ]; then
    want="$HOLM_SHA256"
  else
    fetch "$url.sha256" "$work/holm.tar.gz.sha256" \
      || die "cannot download $url.sha256 (the archive's checksum): set HOLM_SHA256 to the archive's SHA-256"
    want="$(cut -d' ' -f1 <"$work/holm.tar.gz.sha256")"
  fi
  check_sha256 "$work/holm.tar.gz" "$want" "$url"
  mkdir "$work/x"
  tar -xzf "$work/holm.tar.gz" -C "$work/x" || die "cannot unpack $url"
  from="$work/x"
fi

# The programs, at the top of $from or in one directory below it.
find_program() {
  for p in "$from/$1" "$from"/*/"$1"; do
    if [ -f "$p" ]; then printf '%s\n' "$p"; return 0; fi
  done
  return 1
}

# Both found before either is written: a bad source changes nothing.
holm_src="$(find_program holm)" || die "no holm in $from"
holmd_src="$(find_program holmd)" || die "no holmd in $from"
mkdir -p "$dir" || die "cannot make $dir"
for name in holm holmd; do
  if [ "$name" = holm ]; then src="$holm_src"; else src="$holmd_src"; fi
  tmp="$dir/.$name.new.$$"
  cp "$src" "$tmp" && chmod 0755 "$tmp" && mv -f "$tmp" "$dir/$name" \
    || { rm -f "$tmp"; die "cannot write $dir/$name"; }
  say "installed $dir/$name"
done
"$dir/holm" --version >/dev/null 2>&1 || say "warning: $dir/holm --version did not answer"

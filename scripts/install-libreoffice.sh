#!/bin/sh
# Install LibreOffice headless (Calc only) and Gnumeric (ssconvert: the engine that follows Excel)
# for the formula-recalculation tests.
# Idempotent: does nothing if soffice is already on PATH. Debian/Ubuntu (apt) only.
# Debian 12 gives LibreOffice 7.4.7 (about 90 MB download, under a minute);
# see /work/shared/toolchain.md section 2.
set -eu

print_version() {
    # A throwaway profile keeps ~/.config untouched.
    tmp_profile=$(mktemp -d)
    "$1" "-env:UserInstallation=file://$tmp_profile" --version
    rm -rf "$tmp_profile"
}

existing=$(command -v soffice || command -v libreoffice || true)
if [ -n "$existing" ] && command -v pdftotext >/dev/null 2>&1 && command -v ssconvert >/dev/null 2>&1; then
    echo "LibreOffice already installed: $existing"
    print_version "$existing"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "error: soffice not found and apt-get is not available; install LibreOffice by hand" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "error: not root and sudo is not available; run as root" >&2
        exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    libreoffice-calc-nogui poppler-utils gnumeric

soffice_path=$(command -v soffice || command -v libreoffice || true)
if [ -z "$soffice_path" ]; then
    echo "error: installation finished but soffice is still not on PATH" >&2
    exit 1
fi
print_version "$soffice_path"
ssconvert --version | head -n 1

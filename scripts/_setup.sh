# Shared set-up for scripts/demo and scripts/test: sourced, not run.
# Installs what a fresh machine lacks, so nothing is left to do by hand.

ensure_uv() {
    if ! command -v uv >/dev/null 2>&1; then
        echo "==> installing uv with pip" >&2
        python3 -m pip install --quiet --user uv || python3 -m pip install --quiet uv
        export PATH="$HOME/.local/bin:$PATH"
    fi
}

# ensure_system_packages CMD:PKG ...: apt-get install PKG when CMD is not on PATH.
ensure_system_packages() {
    local wanted=() pair
    for pair in "$@"; do
        command -v "${pair%%:*}" >/dev/null 2>&1 || wanted+=("${pair#*:}")
    done
    [ "${#wanted[@]}" -eq 0 ] && return 0
    echo "==> installing system packages: ${wanted[*]}" >&2
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${wanted[@]}" >&2
}

sync_workspace() {
    echo "==> uv sync --frozen" >&2
    # --compile-bytecode: what pip does on install; without it a machine that writes no
    # bytecode (PYTHONDONTWRITEBYTECODE) compiles every dependency on every command
    uv sync --frozen --all-packages --all-extras --group dev --quiet --compile-bytecode
}

# ensure_files PATH:PKG ...: apt-get install PKG when PATH is missing (fonts and data files
# have no command to look for).
ensure_files() {
    local wanted=() pair
    for pair in "$@"; do
        [ -e "${pair%%:*}" ] || wanted+=("${pair#*:}")
    done
    [ "${#wanted[@]}" -eq 0 ] && return 0
    _apt_install "${wanted[@]}"
}

# ensure_tesseract_languages LANG ...: install tesseract's data for each language that
# `tesseract --list-langs` does not name (Debian package tesseract-ocr-LANG, `_` as `-`).
ensure_tesseract_languages() {
    local have wanted=() lang
    have="$(tesseract --list-langs 2>/dev/null || true)"
    for lang in "$@"; do
        grep -qx "$lang" <<<"$have" || wanted+=("tesseract-ocr-${lang//_/-}")
    done
    [ "${#wanted[@]}" -eq 0 ] && return 0
    _apt_install "${wanted[@]}"
}

_apt_install() {
    echo "==> installing system packages: $*" >&2
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >&2
}

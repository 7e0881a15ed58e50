#!/usr/bin/env bash
# One entry point for a fresh machine: installs what the project needs, then runs
#   ./run.sh conformance   the conformance suite (default tier) and writes reports/
#   ./run.sh tests         the project's own tests (tox -e unit)
#   ./run.sh coverage      the same tests with coverage, HTML in build/coverage (tox -e coverage)
#   ./run.sh setup         set-up only
# Extra arguments go to the tox environment.
set -euo pipefail
cd "$(dirname "$0")"

need_system_packages() {
    # ncnn's Vulkan backend needs the loader and a driver; Mesa's lavapipe gives a
    # software Vulkan device on machines without a GPU. Chromium (headless) tests the HTML report.
    local missing=()
    for p in libvulkan1 mesa-vulkan-drivers chromium; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
    done
    echo "${missing[@]:-}"
}

install_system_packages() {
    command -v dpkg-query >/dev/null || { echo "run.sh: not a Debian system; install a Vulkan loader and driver yourself" >&2; return 0; }
    local missing; missing=$(need_system_packages)
    [ -z "$missing" ] && return 0
    local sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    echo "run.sh: installing system packages: $missing"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
}

install_tox() {
    local py=${PYTHON:-python3.11}
    command -v "$py" >/dev/null || py=python3
    if [ ! -x .venv/bin/tox ]; then
        echo "run.sh: creating .venv with tox ($("$py" --version))"
        "$py" -m venv .venv
        .venv/bin/pip install -q -r requirements/tox.txt
    fi
}

main() {
    local what=${1:-}; shift || true
    install_system_packages
    install_tox
    case "$what" in
        setup) .venv/bin/tox -e unit --notest ;;
        # `--` with nothing after it would replace tox.ini's default pytest arguments
        tests) .venv/bin/tox -e unit ${1:+-- "$@"} ;;
        coverage) .venv/bin/tox -e coverage ${1:+-- "$@"} ;;
        conformance) .venv/bin/tox -e conformance ${1:+-- "$@"} ;;
        *) echo "usage: ./run.sh {conformance|tests|coverage|setup} [args...]" >&2; exit 2 ;;
    esac
}
main "$@"

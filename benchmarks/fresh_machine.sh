#!/usr/bin/env bash
# The README's two commands on a fresh Debian 12 (debootstrap minbase), as a new user runs them.
#
#   sudo benchmarks/fresh_machine.sh cpu|pypi [WORKDIR]      (default WORKDIR /var/tmp/wsfresh)
#
# Builds a fresh root, copies a clean clone of this branch's last commit into it, and runs, each
# taken from the README (not retyped here): the app's apt-get line and command, then the tests'
# apt-get line and command. Prints what each step downloaded, installed and took, and the test
# counts. Routes for torch:
#   cpu   the README's CPU-only torch line first. download.pytorch.org cannot be reached from the
#         machines this was written on, so its `--index-url ...` is replaced by `--find-links` to
#         a folder holding that same wheel (WHEELS, default /opt/wheels, bound into the root);
#         torch's dependencies then come from PyPI.
#   pypi  nothing first: PyPI's torch==2.13.0 is the CUDA 13 build (about 3 GB with nvidia-*).
# The root has no CUDA toolkit, no GPU and no pip configuration (commands run under env -i). Not
# a user's: the host's CA bundle is copied in for pip (PIP_CERT), for sandboxes behind a TLS proxy.
# The app is started with the host's X display if DISPLAY is set (xvfb-run works), else offscreen;
# a window still open after APP_SECONDS (default 20) counts as opened. NICE (default 10) is the
# niceness of the test command; SKIP_TESTS=1 stops after the test install (to try the script).
# Needs root (debootstrap, chroot, mount).
set -euo pipefail
# bash reads a script as it runs: run a copy, so editing the checkout cannot break a run
if [ -z "${FRESH_MACHINE_REPO:-}" ]; then
    export FRESH_MACHINE_REPO=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
    copy=$(mktemp /tmp/fresh_machine.XXXXXX.sh) && cp "$0" "$copy"
    exec bash "$copy" "$@"
fi

ROUTE=${1:?usage: fresh_machine.sh cpu|pypi [WORKDIR]}
WORK=${2:-/var/tmp/wsfresh}
WHEELS=${WHEELS:-/opt/wheels}
APP_SECONDS=${APP_SECONDS:-20}
NICE=${NICE:-10}
case $ROUTE in cpu|pypi) ;; *) echo "route must be cpu or pypi, got $ROUTE" >&2; exit 2 ;; esac
REPO=$FRESH_MACHINE_REPO
ROOT=$WORK/$ROUTE
README=$REPO/README.md

say() { printf '== %s\n' "$*"; }
took() { echo "$(( $(date +%s) - $1 )) s"; }
size() { du -sh --apparent-size "$1" 2>/dev/null | cut -f1; }

# The README's set-up lines, in order: its indented `sudo apt-get install -y` lines (the app's,
# then the tests') and its `python3 -m venv` lines (the app command, then the test command).
mapfile -t APT < <(sed -n 's/^    sudo apt-get install -y /apt-get install -y /p' "$README" | head -2)
mapfile -t CMD < <(head -40 "$README" | sed -n 's/^    \(python3 -m venv .*\)$/\1/p' | head -2)
CPU_TORCH=$(sed -n 's/^ *\(python3 -m venv .venv && \.venv\/bin\/pip install torch==[^ ]* --index-url [^ ]*\)$/\1/p' "$README" | head -1)
[ ${#APT[@]} -eq 2 ] && [ ${#CMD[@]} -eq 2 ] || { echo "README: expected 2 apt-get lines and 2 commands" >&2; exit 2; }
[ "$ROUTE" = pypi ] || [ -n "$CPU_TORCH" ] || { echo "README: no CPU-only torch line" >&2; exit 2; }

MIRROR=$(grep -h -o -E '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list \
         /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null \
         | head -1 | awk '{print $2}' || true)
MIRROR=${MIRROR:-http://deb.debian.org/debian}
# two routes started side by side: the second waits for the first one's dpkg lock (it used to fail)
command -v debootstrap >/dev/null || apt-get -o DPkg::Lock::Timeout=600 install -y debootstrap >/dev/null

cleanup() {
    for m in "$ROOT/opt/wheels" "$ROOT/tmp/.X11-unix" "$ROOT/dev/pts" "$ROOT/dev" "$ROOT/proc"; do
        mountpoint -q "$m" && umount "$m" || true
    done
}
trap cleanup EXIT
cleanup
if grep -q " $ROOT/" /proc/mounts; then  # rm -rf through a bind mount of /dev would be a disaster
    echo "still mounted under $ROOT; unmount it first" >&2; exit 1
fi
rm -rf --one-file-system "$ROOT"
mkdir -p "$WORK"

T=$(date +%s)
say "debootstrap --variant=minbase bookworm from $MIRROR"
debootstrap --variant=minbase bookworm "$ROOT" "$MIRROR" > "$WORK/$ROUTE-debootstrap.log" 2>&1
echo "root: $(size "$ROOT"), $(took "$T")"
mount -t proc proc "$ROOT/proc"
mount --bind /dev "$ROOT/dev"
mount --bind /dev/pts "$ROOT/dev/pts"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
cp /etc/ssl/certs/ca-certificates.crt "$ROOT/etc/host-ca-bundle.crt"  # apt's ca-certificates rewrites /etc/ssl
HOMEDIR=$ROOT/root
git clone -q --no-hardlinks "$REPO" "$HOMEDIR/warpscope"  # the branch's last commit, nothing else
echo "clone: $(git -C "$HOMEDIR/warpscope" log -1 --format='%h %s' | cut -c1-90)"

# A user's shell: no pip configuration, no CUDA, nothing of this host's environment.
ENV=(env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
     LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive PIP_CERT=/etc/host-ca-bundle.crt)
in_root() { chroot "$ROOT" "${ENV[@]}" "$@"; }
apt_step() {  # $1: label, $2: the README's apt-get line
    local t=$(date +%s) log=$WORK/$ROUTE-apt-$1.log
    in_root sh -c "apt-get update -q >/dev/null && $2" > "$log" 2>&1
    echo "$1 apt-get: $(grep -o -E '[0-9]+ newly installed' "$log"), $(grep -o -E 'Need to get [^ ]+ [kMG]?B' "$log" | sed 's/Need to get //'), $(took "$t")"
}
pip_downloads() {  # what pip downloaded (MB), from its log
    grep -o -E 'Downloading [^ ]+ \([0-9.]+ [kMG]B\)' "$1" | grep -o -E '[0-9.]+ [kMG]B' \
        | awk '{v=$1; if ($2=="kB") v/=1000; if ($2=="GB") v*=1000; s+=v} END {printf "%.0f MB", s}'
}

say "the app: ${APT[0]}"
apt_step app "${APT[0]}"
say "the app: ${CMD[0]}"
T=$(date +%s)
if [ -n "${DISPLAY:-}" ] && [ -d /tmp/.X11-unix ]; then
    mkdir -p "$ROOT/tmp/.X11-unix" && mount --bind /tmp/.X11-unix "$ROOT/tmp/.X11-unix"
    DISP=(DISPLAY="$DISPLAY")
else
    DISP=(QT_QPA_PLATFORM=offscreen)
fi
# the command as written, in its two parts: the install, then the window (open until killed)
APP_INSTALL=${CMD[0]% && *}
APP_RUN=${CMD[0]##* && }
[ "$APP_INSTALL && $APP_RUN" = "${CMD[0]}" ] || { echo "cannot split the app command" >&2; exit 2; }
in_root sh -c "cd /root/warpscope && $APP_INSTALL" > "$WORK/$ROUTE-app.log" 2>&1 \
    || { echo "app install FAILED: $(tail -1 "$WORK/$ROUTE-app.log")"; exit 1; }
INSTALLED=$(took "$T")
set +e
chroot "$ROOT" "${ENV[@]}" "${DISP[@]}" sh -c "cd /root/warpscope && timeout $APP_SECONDS $APP_RUN" \
    >> "$WORK/$ROUTE-app.log" 2>&1
STATUS=$?
set -e
case $STATUS in
    124) WINDOW="opened (still open after $APP_SECONDS s)" ;;
    0) WINDOW="exited 0" ;;
    *) WINDOW="FAILED, exit $STATUS: $(tail -1 "$WORK/$ROUTE-app.log")" ;;
esac
echo "app: downloaded $(pip_downloads "$WORK/$ROUTE-app.log"), .venv $(size "$HOMEDIR/warpscope/.venv"), install $INSTALLED; window $WINDOW"
in_root sh -c "cd /root/warpscope && QT_QPA_PLATFORM=offscreen .venv/bin/python main.py --version && .venv/bin/python main.py --screenshot /root/app.png --gpu H200" \
    > "$WORK/$ROUTE-shot.log" 2>&1 && cp "$ROOT/root/app.png" "$WORK/$ROUTE-app.png" \
    && echo "app screenshot: $WORK/$ROUTE-app.png" || echo "app screenshot FAILED: $(tail -1 "$WORK/$ROUTE-shot.log")"

# `pip install .` in a venv of its own; the command then runs from another folder
T=$(date +%s)
git clone -q --no-hardlinks "$REPO" "$HOMEDIR/pkgsrc"  # pip builds in the tree: not the test one
in_root sh -c "python3 -m venv /root/pkg && /root/pkg/bin/pip install -q /root/pkgsrc && cd / \
    && /root/pkg/bin/warpscope --version && /root/pkg/bin/warpscope --help | head -1 \
    && QT_QPA_PLATFORM=offscreen /root/pkg/bin/warpscope explain --gpu H200 --elements 1e6 --block 256 | grep -E 'Blocks in the grid|Waves'" \
    > "$WORK/$ROUTE-package.log" 2>&1 \
    && echo "pip install .: $(took "$T"); $(tr '\n' ';' < "$WORK/$ROUTE-package.log" | tr -s ' ')" \
    || echo "pip install . FAILED: $(tail -2 "$WORK/$ROUTE-package.log" | tr '\n' ' ')"
rm -rf --one-file-system "$HOMEDIR/pkg" "$HOMEDIR/pkgsrc"

# A new user's second venv: the test command starts from a clean checkout
rm -rf "$HOMEDIR/warpscope/.venv"
say "the tests: ${APT[1]}"
apt_step tests "${APT[1]}"
T=$(date +%s)
if [ "$ROUTE" = cpu ]; then
    mkdir -p "$ROOT/opt/wheels" && mount --bind -o ro "$WHEELS" "$ROOT/opt/wheels"
    # torch's own dependencies then come from PyPI, as they would from PyTorch's index
    FIRST=$(printf '%s' "$CPU_TORCH" | sed -E 's#--index-url [^ ]+#--find-links /opt/wheels#')
    say "CPU torch first (README's line, a folder with its wheel for its index): $FIRST"
    in_root sh -c "cd /root/warpscope && $FIRST" > "$WORK/$ROUTE-torch.log" 2>&1 \
        || { echo "cpu torch FAILED: $(tail -1 "$WORK/$ROUTE-torch.log")"; exit 1; }
    echo "cpu torch: the wheel $(size "$WHEELS"/torch-*.whl) (a download from PyTorch's index for a user) + $(pip_downloads "$WORK/$ROUTE-torch.log") from PyPI, $(took "$T")"
fi
say "the tests: ${CMD[1]}"
INSTALL=${CMD[1]%% && QT_QPA_PLATFORM=*}
TESTS=${CMD[1]#"$INSTALL && "}
[ "$INSTALL && $TESTS" = "${CMD[1]}" ] || { echo "cannot split the test command" >&2; exit 2; }
T=$(date +%s)
in_root sh -c "cd /root/warpscope && $INSTALL" > "$WORK/$ROUTE-install.log" 2>&1 \
    || { echo "tests install FAILED: $(tail -1 "$WORK/$ROUTE-install.log")"; exit 1; }
echo "tests install: downloaded $(pip_downloads "$WORK/$ROUTE-install.log"), .venv $(size "$HOMEDIR/warpscope/.venv"), $(took "$T")"
[ -z "${SKIP_TESTS:-}" ] || { echo "SKIP_TESTS: not running: $TESTS"; exit 0; }
T=$(date +%s)
set +e
in_root nice -n "$NICE" sh -c "cd /root/warpscope && $TESTS" > "$WORK/$ROUTE-pytest.log" 2>&1
STATUS=$?
set -e
echo "tests: exit $STATUS, $(took "$T"): $(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed)' "$WORK/$ROUTE-pytest.log" | tail -1)"
grep -E '^(FAILED|ERROR) ' "$WORK/$ROUTE-pytest.log" | cut -c1-200 || true
grep -E '^SKIPPED ' "$WORK/$ROUTE-pytest.log" | cut -c1-200 || true
echo "logs: $WORK/$ROUTE-*.log"
exit $STATUS

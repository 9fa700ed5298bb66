#!/bin/sh
# quickstart.sh - installs what kmtk and its tests need (Debian packages), builds it, and trains and
# tests a linear SVM on the bundled heart_scale data. Run from the repository root.
set -e
cd "$(dirname "$0")"
# to build; then what `make check` needs too (the Python module's tests, and the peers
# that the interchange and logistic-regression tests compare with)
PKGS="gcc make pkg-config libopenblas-dev liblapacke-dev zlib1g-dev
      python3-numpy python3-scipy python3-pytest python3-sklearn liblinear-tools libsvm-tools"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "installing:$missing"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi
make -j2
echo "== ./train -s l1svm -c 1 data/heart_scale heart_scale.model"
./train -s l1svm -c 1 data/heart_scale heart_scale.model
echo "== ./predict data/heart_scale heart_scale.model heart_scale.out"
./predict data/heart_scale heart_scale.model heart_scale.out

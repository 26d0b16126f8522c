#!/usr/bin/env bash
# Build .qtcarry/ (git-ignored): what the GPU machine's image lacks to run the window offscreen.
# A stripped PySide6-Essentials 6.9.3 (abi3; Core/Gui/Widgets/Svg/Test/OpenGL/DBus/Network/
# PrintSupport, offscreen + minimal platforms), the pure-Python wheels the GUI imports, and the
# Debian 12 libraries Qt links against (benchmarks/gui_on_device.sh unpacks only those the image
# does not already have). Needs pip and apt-get download here; ~37 MB.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
PIP=(python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp
     --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64)
"${PIP[@]}" -d "$tmp" PySide6-Essentials==6.9.3 shiboken6==6.9.3 pyqtgraph==0.14.0 psygnal==0.16.1 \
    superqt==0.9.0 qtpy pygments typing_extensions
mkdir -p "$tmp/stage"
(cd "$tmp/stage" && for w in ../pyside6_essentials-*.whl ../shiboken6-*.whl; do python3 -m zipfile -e "$w" .; done)
cd "$tmp/stage/PySide6"
keep=" QtCore QtGui QtWidgets QtSvg QtSvgWidgets QtTest QtOpenGL QtOpenGLWidgets QtDBus QtNetwork QtPrintSupport "
for f in *.abi3.so; do m=${f%.abi3.so}; [[ $keep == *" $m "* ]] || rm -f "$f"; done
rm -rf ./*.pyi Qt/qml Qt/translations Qt/resources Qt/metatypes Qt/libexec Qt/bin assistant designer \
    linguist lrelease lupdate qmlformat qmllint qmlls svgtoqml doc include typesystems glue scripts \
    libpyside6qml.abi3.so.*
for f in Qt/lib/libQt6*.so.6; do m=${f#Qt/lib/libQt6}; m=${m%.so.6}
    [[ " Core Gui Widgets Svg SvgWidgets Test OpenGL OpenGLWidgets DBus Network PrintSupport XcbQpa " == *" $m "* ]] || rm -f "$f"; done
(cd Qt/plugins && for d in *; do [[ $d == platforms || $d == imageformats || $d == iconengines ]] || rm -rf "$d"; done)
(cd Qt/plugins/platforms && ls | grep -v -E "offscreen|minimal.so" | xargs -r rm -f)
cd - >/dev/null
rm -rf .qtcarry && mkdir -p .qtcarry/debs
tar -C "$tmp/stage" -cJf .qtcarry/pyside_strip.tar.xz PySide6 shiboken6
cp "$tmp"/{pyqtgraph,psygnal,superqt,QtPy,pygments,typing_extensions}-*.whl .qtcarry/
(cd .qtcarry/debs && apt-get download libegl1 libgl1 libglx0 libglvnd0 libopengl0 libx11-xcb1 libx11-6 \
    libx11-data libxau6 libxdmcp6 libbrotli1 libbsd0 libdbus-1-3 libexpat1 libfontconfig1 fontconfig-config \
    libfreetype6 libglib2.0-0 libpcre2-8-0 libpng16-16 libxkbcommon0 libxkbcommon-x11-0 libxcb1 libxcb-cursor0 \
    libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0 libxcb-render-util0 libxcb-render0 libxcb-shape0 \
    libxcb-shm0 libxcb-sync1 libxcb-util1 libxcb-xfixes0 libxcb-xkb1 libmd0 libgpg-error0 libgcrypt20 liblz4-1 \
    libzstd1 libsystemd0 libcap2 fonts-dejavu-core)
grep -qx "/.qtcarry/" .git/info/exclude 2>/dev/null || echo "/.qtcarry/" >> .git/info/exclude
du -sh .qtcarry

#!/usr/bin/env bash
# Run benchmarks/gui_stalls.py (the real window offscreen: start-up, a live sweep, the recorded
# 75-point H200 sweep opened from its file, the Experiments tab, the longest GUI-thread stall of
# each; about 30 s of measuring plus the set-up, never more than 4 minutes) on the GPU machine:
#     bash benchmarks/gui_on_device.sh $OUT [trace [ARGS]]   (trace: benchmarks/gui_trace_on_gpu.py ARGS instead)
# Writes $OUT/gui_stalls.log and $OUT/stalls/{stalls.json,sweep_tab.png,experiments_tab.png}.
# The machine's image has no Qt: a stripped
# PySide6 6.9.3 (QtCore/Gui/Widgets/Svg/Test/OpenGL only), pyqtgraph and the Debian 12 libraries
# Qt needs that the image lacks are carried in .qtcarry/ (git-ignored, made by hand; see
# benchmarks/RESULTS-gui.md). Libraries the image already has are never shadowed.
set -u
OUT=${1:?usage: gui_on_device.sh OUT_DIR}
mkdir -p /tmp/qt /tmp/site /tmp/libs
tar -xJf .qtcarry/pyside_strip.tar.xz -C /tmp/qt
python3 -m pip install -q --upgrade --no-index --no-deps --no-compile --target /tmp/site .qtcarry/*.whl
for deb in .qtcarry/debs/*.deb; do dpkg -x "$deb" /tmp/libs; done
for lib in /tmp/libs/usr/lib/x86_64-linux-gnu/*.so.* /tmp/libs/lib/x86_64-linux-gnu/*.so.*; do
  [ -e "$lib" ] || continue
  if ldconfig -p | grep -q " $(basename "$lib") "; then rm -f "$lib"; fi
done
printf '<?xml version="1.0"?><fontconfig><dir>/tmp/libs/usr/share/fonts</dir><cachedir>/tmp/fccache</cachedir></fontconfig>' > /tmp/fonts.conf
export FONTCONFIG_FILE=/tmp/fonts.conf QT_QPA_PLATFORM=offscreen PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=/tmp/libs/usr/lib/x86_64-linux-gnu:/tmp/libs/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONPATH=/tmp/qt:/tmp/site${PYTHONPATH:+:$PYTHONPATH}
if ! python3 -c "from PySide6 import QtWidgets; QtWidgets.QApplication([]); import pyqtgraph"; then
  for f in /tmp/qt/PySide6/Qt/lib/libQt6*.so.6 /tmp/qt/PySide6/Qt/plugins/platforms/libqoffscreen.so; do
    ldd "$f" | grep "not found"
  done | sort -u
  exit 3
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [ "${2:-}" = trace ]; then  # Kernel source > Trace on the GPU, in the real window
  timeout 400 python3 benchmarks/gui_trace_on_gpu.py --out "$OUT/trace_on_gpu" "${@:3}" > "$OUT/gui_trace_on_gpu.log" 2>&1
  echo "gui_trace_on_gpu.py exit status $?"
  grep -v -e propagateSizeHints -e '^\[kernel host\]' "$OUT/gui_trace_on_gpu.log" | tail -8
  exit 0
fi
timeout 210 python3 benchmarks/gui_stalls.py --out "$OUT/stalls" --budget-s 180 > "$OUT/gui_stalls.log" 2>&1
echo "gui_stalls.py exit status $?"
grep -v -e propagateSizeHints -e '^\[kernel host\]' "$OUT/gui_stalls.log" | tail -6

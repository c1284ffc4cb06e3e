"""Render the SVG icon to a square PNG (the hicolor theme's 256 px icon): render_icon.py SVG SIZE PNG."""

import sys

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer


def main() -> int:
    svg, size, png = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    app = QGuiApplication(sys.argv[:1])  # noqa: F841 - painting needs one
    renderer = QSvgRenderer(svg)
    if not renderer.isValid():
        print(f"render_icon: cannot read {svg}", file=sys.stderr)
        return 1
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    renderer.render(painter)
    painter.end()
    return 0 if image.save(png, "PNG") else 1


if __name__ == "__main__":
    sys.exit(main())

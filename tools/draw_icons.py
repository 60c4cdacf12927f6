"""Regenerates the PNG icons in ``moderator/transports/web/assets/art/`` from the SVGs beside them.

The SVGs are the source; the PNGs are committed, so neither the server nor CI needs this script or its renderer.
Run it after changing ``favicon.svg`` or ``icon-maskable.svg``::

    pip install cairosvg     # needs the cairo C library (Debian: libcairo2)
    python tools/draw_icons.py

It writes the favicon's 32 px PNG (for browsers without SVG favicons), the 192 and 512 px icons that
``manifest.webmanifest`` names, and from the full-bleed ``icon-maskable.svg`` the 180 px ``apple-touch-icon.png``
(iOS rounds the corners itself and shows transparency as black) and the 512 px maskable icon. It prints each file
with its size, so a look at ``git diff --stat`` afterwards tells what changed.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

from PIL import Image

ART = Path(__file__).resolve().parent.parent / "moderator" / "transports" / "web" / "assets" / "art"

# (source SVG, PNG written, size in pixels)
ICONS = (
    ("favicon.svg", "icon-32.png", 32),
    ("favicon.svg", "icon-192.png", 192),
    ("favicon.svg", "icon-512.png", 512),
    ("icon-maskable.svg", "apple-touch-icon.png", 180),
    ("icon-maskable.svg", "icon-maskable-512.png", 512),
)


def render(svg: Path, size: int) -> Image.Image:
    """``svg`` drawn as a ``size`` x ``size`` RGBA image."""
    try:
        import cairosvg  # type: ignore[import-not-found]
    except (ImportError, OSError) as error:  # OSError: the package is there but the cairo library is not
        sys.exit(f"draw_icons needs cairosvg and the cairo library ({error}); see this script's docstring")
    png = cairosvg.svg2png(url=str(svg), output_width=size, output_height=size)
    return Image.open(io.BytesIO(png)).convert("RGBA")


def main() -> None:
    for source, target, size in ICONS:
        image = render(ART / source, size)
        image.save(ART / target, optimize=True)
        print(f"{target}: {image.width}x{image.height} from {source}, {(ART / target).stat().st_size} bytes")


if __name__ == "__main__":
    main()

"""QR codes of join links: PNG for a chat, SVG for a page, text for a terminal."""

from __future__ import annotations

import io
from dataclasses import dataclass

import qrcode
import qrcode.constants
import qrcode.image.svg
from qrcode.image.pil import PilImage


def qr_png(data: str) -> bytes:
    """A QR code as PNG bytes."""
    code = qrcode.QRCode(error_correction=qrcode.constants.ERROR_CORRECT_M, box_size=10, border=4,
                         image_factory=PilImage)
    code.add_data(data)
    buffer = io.BytesIO()
    code.make_image().save(buffer, format="PNG")
    return buffer.getvalue()


def qr_svg(data: str) -> str:
    """A QR code as one SVG document (a single path: prints sharp at any size)."""
    image = qrcode.make(data, image_factory=qrcode.image.svg.SvgPathImage, border=4)
    text: str = image.to_string(encoding="unicode")
    return text


@dataclass(frozen=True, slots=True)
class QrDrawing:
    """A QR code as a page's template draws it in SVG: its printed size, its ``viewBox``, and the one path of its
    modules (``qr_svg``'s, the same drawing)."""

    width: str
    height: str
    view_box: str
    path: str


def qr_drawing(data: str) -> QrDrawing:
    """A QR code's SVG drawing, for a page's template (``templates/partials/qr.html``)."""
    image = qrcode.make(data, image_factory=qrcode.image.svg.SvgPathImage, border=4)
    root, path = image.get_image(), image.path
    assert path is not None
    return QrDrawing(root.get("width"), root.get("height"), root.get("viewBox"), path.get("d", ""))


def qr_text(data: str) -> str:
    """A QR code drawn with half-block characters, for a terminal."""
    code = qrcode.QRCode(border=2)
    code.add_data(data)
    code.make(fit=True)
    out = io.StringIO()
    code.print_ascii(out=out, invert=True)
    return out.getvalue()

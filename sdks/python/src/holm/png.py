"""Reading a PNG's pixels with the standard library alone (zlib), so an agent
can look at a screenshot without an image library: 8-bit greyscale, RGB,
palette and alpha images, not interlaced, which is what holm's guest
writes. Pure Python: ask for a small image (`max_width`, `region`) when
speed matters.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import List, Optional, Tuple

SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Samples per pixel by colour type: grey, RGB, palette, grey+alpha, RGBA.
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


@dataclass
class Image:
    """Decoded pixels: `pixels` holds `width * height` RGB triples, row by row."""

    width: int
    height: int
    pixels: bytes

    def pixel(self, x: int, y: int) -> Tuple[int, int, int]:
        """The (red, green, blue) of one pixel."""
        i = (y * self.width + x) * 3
        return (self.pixels[i], self.pixels[i + 1], self.pixels[i + 2])

    def changed(self, other: "Image", tolerance: int = 0) -> Optional[Tuple[int, int, int, int]]:
        """The bounding box (x0, y0, x1, y1) of the pixels that differ from
        `other` by more than `tolerance` in a channel, or None when none do
        (or the sizes differ)."""
        if (self.width, self.height) != (other.width, other.height):
            return None
        box: Optional[List[int]] = None
        w = self.width * 3
        for y in range(self.height):
            a = self.pixels[y * w : (y + 1) * w]
            b = other.pixels[y * w : (y + 1) * w]
            if a == b:
                continue
            for x in range(self.width):
                i = x * 3
                if any(abs(a[i + c] - b[i + c]) > tolerance for c in range(3)):
                    if box is None:
                        box = [x, y, x, y]
                    else:
                        box = [min(box[0], x), min(box[1], y), max(box[2], x), max(box[3], y)]
        return tuple(box) if box else None  # type: ignore[return-value]


def decode(data: bytes) -> Image:
    """The pixels of a PNG (see the module's doc for what it reads)."""
    if not data.startswith(SIGNATURE):
        raise ValueError("not a PNG")
    pos = len(SIGNATURE)
    idat = []
    palette = b""
    width = height = depth = ctype = interlace = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            palette = body
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if depth != 8 or interlace or ctype not in CHANNELS:
        raise ValueError(f"unsupported PNG: depth {depth}, colour type {ctype}, interlace {interlace}")
    bpp = CHANNELS[ctype]
    stride = width * bpp
    raw = zlib.decompress(b"".join(idat))
    rows = unfilter(raw, height, stride, bpp)
    return Image(width, height, to_rgb(rows, ctype, palette))


def unfilter(raw: bytes, height: int, stride: int, bpp: int) -> bytes:
    out = bytearray()
    prev = bytearray(stride)
    pos = 0
    for _ in range(height):
        kind = raw[pos]
        line = bytearray(raw[pos + 1 : pos + 1 + stride])
        pos += 1 + stride
        if kind == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif kind == 2:
            line = bytearray((x + y) & 0xFF for x, y in zip(line, prev))
        elif kind == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        elif kind != 0:
            raise ValueError(f"unknown PNG filter {kind}")
        out += line
        prev = line
    return bytes(out)


def to_rgb(rows: bytes, ctype: int, palette: bytes) -> bytes:
    if ctype == 2:
        return rows
    if ctype == 6:
        out = bytearray(len(rows) // 4 * 3)
        out[0::3] = rows[0::4]
        out[1::3] = rows[1::4]
        out[2::3] = rows[2::4]
        return bytes(out)
    if ctype == 0:
        out = bytearray(len(rows) * 3)
        out[0::3] = out[1::3] = out[2::3] = rows
        return bytes(out)
    if ctype == 4:
        grey = rows[0::2]
        out = bytearray(len(grey) * 3)
        out[0::3] = out[1::3] = out[2::3] = grey
        return bytes(out)
    # A palette: each sample is an index into it.
    return b"".join(palette[i * 3 : i * 3 + 3] for i in rows)

"""A small, unique PNG made here (no image library): random-coloured tiles, so its bytes
cannot appear in the store by chance and a sealed copy is recognisably not the original."""

import os
import struct
import zlib


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def unique_png(width: int = 96, height: int = 64, tile: int = 8) -> bytes:
    colours = [[os.urandom(3) for _ in range(width // tile)] for _ in range(height // tile)]
    rows = b"".join(b"\x00" + b"".join(colours[y // tile][x // tile] for x in range(width)) for y in range(height))
    # Level 0 keeps the random colours as they are: long unique runs to search the store for.
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, 0)) + chunk(b"IEND", b""))


def distinctive_slices(png: bytes, count: int = 4, size: int = 24) -> list[bytes]:
    """Slices of the pixel data (past the headers) that only this image holds."""
    start = 8 + 25 + 8 + 2  # signature, IHDR chunk, IDAT header, zlib header
    step = max(size, (len(png) - start - 16) // count)
    return [png[start + i * step: start + i * step + size] for i in range(count)]

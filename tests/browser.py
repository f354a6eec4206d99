"""Rendering a page in headless Chromium and reading the screenshot back."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import components


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def screenshot(page: Path, tmp_path: Path, anchor: str = "") -> tuple[Path, str]:
    """Render ``page`` (at ``#anchor``) headless; the PNG and Chromium's log."""
    chromium = _chromium()
    if chromium is None:
        components.missing("chromium", "Chromium is not installed")
    shot = tmp_path / f"{page.stem}{anchor}.png"
    profile = tmp_path / f"profile-{page.stem}{anchor}"
    command = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        f"--screenshot={shot}",
        "--window-size=1200,2000",
        "--enable-logging=stderr",
        "--v=0",
        page.as_uri() + (f"#{anchor}" if anchor else ""),
    ]
    env = {**os.environ, "HOME": str(tmp_path)}
    result = subprocess.run(
        command, capture_output=True, text=True, timeout=120, env=env, check=False
    )
    assert shot.exists(), f"no screenshot (exit {result.returncode}):\n{result.stderr[-3000:]}"
    return shot, result.stderr


def _console_problems(log: str) -> list[str]:
    return [line for line in log.splitlines() if "Uncaught" in line or "CONSOLE" in line]


def read_png(path: Path) -> tuple[int, int, list[bytes]]:
    """A PNG's width, height and rows of RGB(A) bytes (8 bits, not interlaced)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    offset, idat, header = 8, b"", b""
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        chunk = data[offset + 8 : offset + 8 + length]
        offset += 12 + length
        if kind == b"IHDR":
            header = chunk
        elif kind == b"IDAT":
            idat += chunk
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and interlace == 0, (depth, interlace)
    channels = {2: 3, 6: 4}[colour]
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, row = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        if kind == 1:  # Sub
            for i in range(channels, stride):
                row[i] = (row[i] + row[i - channels]) & 0xFF
        elif kind == 2:  # Up
            row = bytearray((a + b) & 0xFF for a, b in zip(row, previous, strict=True))
        elif kind == 3:  # Average
            for i in range(stride):
                left = row[i - channels] if i >= channels else 0
                row[i] = (row[i] + ((left + previous[i]) >> 1)) & 0xFF
        elif kind == 4:  # Paeth
            for i in range(stride):
                a = row[i - channels] if i >= channels else 0
                b = previous[i]
                c = previous[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                predictor = a if pa <= pb and pa <= pc else b if pb <= pc else c
                row[i] = (row[i] + predictor) & 0xFF
        rows.append(bytes(row))
        previous = bytearray(row)
    if channels == 4:  # drop the alpha channel
        for index, rgba in enumerate(rows):
            rgb = bytearray(width * 3)
            for channel in range(3):
                rgb[channel::3] = rgba[channel::4]
            rows[index] = bytes(rgb)
    return width, height, rows

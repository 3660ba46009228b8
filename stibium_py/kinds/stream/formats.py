"""The video formats a stream test may name: codec, frame size and frame rate -> bytes a frame, each figure with its
source. A plan names one (`format: prores-422-hq-uhd-29.97`) or gives `frame_bytes` and `fps` itself.

ProRes is a codec of variable bit rate with a target for every frame: Apple's white paper gives the target data
rate of each codec at each frame size and rate, and says that frames fall short of it, never over. A frame of the
target's bytes is the worst case an editor's disk must carry, so the table keeps the target (megabits a second, 10^6
bits) and a frame is rate / 8 / fps bytes."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

PRORES_SOURCE = "Apple ProRes White Paper (April 2022), Appendix: Target Data Rates"

# the frame rates video names as decimals, as the exact ratios the helper paces by
RATES = {"23.976": Fraction(24000, 1001), "24": Fraction(24), "25": Fraction(25), "29.97": Fraction(30000, 1001),
         "30": Fraction(30)}


@dataclass(frozen=True)
class Format:
    name: str                  # as plans write it
    title: str                 # for people: "ProRes 422 HQ, 3840x2160 at 29.97"
    fps: Fraction
    frame_bytes: int           # the heaviest frame (ProRes: its target rate's share of a second)
    source: str
    extension: str = ""        # an image sequence's frame files (dpx, exr); "" for a movie (one file a stream)

    @property
    def rate_bits_per_s(self) -> float:
        return float(self.frame_bytes * 8 * self.fps)


def _prores(codec: str, title: str, size: str, width_height: str, rate: str, mbps: int) -> Format:
    fps = RATES[rate]
    return Format(f"prores-{codec}-{size}-{rate}", f"ProRes {title}, {width_height} at {rate}", fps,
                  int(mbps * 1_000_000 / 8 / fps), PRORES_SOURCE)


# (codec as plans write it, as Apple writes it) -> {(frame size, rate): target Mb/s}
_PRORES = {
    ("422", "422"): {("hd", "23.976"): 117, ("hd", "29.97"): 147, ("uhd", "23.976"): 471, ("uhd", "29.97"): 589},
    ("422-hq", "422 HQ"): {("hd", "23.976"): 176, ("hd", "29.97"): 220, ("uhd", "23.976"): 707,
                           ("uhd", "29.97"): 884},
    ("4444", "4444"): {("hd", "23.976"): 264, ("hd", "29.97"): 330, ("uhd", "23.976"): 1061,
                       ("uhd", "29.97"): 1326},
}
_SIZES = {"hd": "1920x1080", "uhd": "3840x2160"}

# Image sequences, one file a frame, at 24 frames a second, from the formats' own layouts:
# DPX (SMPTE ST 268): 10-bit RGB packed three components to a 32-bit word (4 bytes a pixel) after a 2048-byte header.
# OpenEXR, uncompressed half-float RGB (its file layout): 6 bytes a pixel, each scan line a chunk with 8 bytes
# before it (its y and size) and an 8-byte entry in the offset table (16 bytes a line), and a header of attributes,
# a few hundred bytes, taken as 1 KiB (a frame is rounded up to whole 16 KiB, which covers it).
DPX_SOURCE = "SMPTE ST 268 (DPX): 10-bit RGB, 4 bytes a pixel, 2048-byte header"
EXR_SOURCE = "OpenEXR file layout: half-float RGB uncompressed, 6 bytes a pixel, 16 bytes a scan line, 1 KiB header"
_CINEMA = {"2k": (2048, 1080), "4k": (4096, 2160)}

FORMATS: dict[str, Format] = {
    f.name: f for (codec, title), rates in _PRORES.items() for (size, rate), mbps in rates.items()
    for f in [_prores(codec, title, size, _SIZES[size], rate, mbps)]}
for _size, (_w, _h) in _CINEMA.items():
    FORMATS[f"dpx-10bit-{_size}-24"] = Format(f"dpx-10bit-{_size}-24", f"DPX 10-bit RGB, {_w}x{_h} at 24",
                                              Fraction(24), _w * _h * 4 + 2048, DPX_SOURCE, "dpx")
    FORMATS[f"exr-half-{_size}-24"] = Format(f"exr-half-{_size}-24", f"OpenEXR half RGB, {_w}x{_h} at 24",
                                             Fraction(24), _w * _h * 6 + _h * 16 + 1024, EXR_SOURCE, "exr")


def listed() -> str:
    return ", ".join(sorted(FORMATS))

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
         "30": Fraction(30), "50": Fraction(50), "59.94": Fraction(60000, 1001), "60": Fraction(60)}


@dataclass(frozen=True)
class Format:
    name: str                  # as plans write it
    title: str                 # for people: "ProRes 422 HQ, 3840x2160 at 29.97"
    fps: Fraction
    frame_bytes: int           # the heaviest frame (ProRes: its target rate's share of a second)
    source: str
    extension: str = ""        # an image sequence's frame files (dpx, exr); "" for a movie (one file a stream)
    low_bits_per_s: int | None = None      # a codec of variable rate whose maker gives a range: its low end (the
                                           # frame is the high end's)

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


# DNxHR is of constant bytes a frame: Avid's bandwidth specification gives each codec's bytes a frame at each frame
# size, the same at every rate (HQ and HQX the same bytes: HQX spends them on 12 bits).
DNXHR_SOURCE = "Avid, DNxHR Codec Bandwidth Specifications (2015): bytes per frame"
_DNXHR = {
    ("lb", "LB"): {"2k": 200_704, "uhd": 749_568},
    ("sq", "SQ"): {"2k": 643_072, "uhd": 2_408_448},
    ("hq", "HQ"): {"2k": 970_752, "uhd": 3_641_344, "4k": 3_887_104},
    ("hqx", "HQX"): {"2k": 970_752, "uhd": 3_641_344, "4k": 3_887_104},
    ("444", "444"): {"2k": 1_941_504, "uhd": 7_286_784, "4k": 7_770_112},
}
_DNX_SIZES = {"2k": "2048x1080", "uhd": "3840x2160", "4k": "4096x2160"}
for (_codec, _title), _sizes in _DNXHR.items():
    for _size, _bytes in _sizes.items():
        for _rate in ("23.976", "25", "29.97"):
            _name = f"dnxhr-{_codec}-{_size}-{_rate}"
            FORMATS[_name] = Format(_name, f"DNxHR {_title}, {_DNX_SIZES[_size]} at {_rate}", RATES[_rate], _bytes,
                                    DNXHR_SOURCE)

# A camera's H.264 is long-GOP and of variable rate: the maker states a rate "approx." or a choice of rates, and a
# frame of the highest rate's share of a second is taken (a key frame is larger than that for a moment: a player's
# buffer covers it, as it does the camera's). Sony's XAVC S (H.264 in MP4): 3840x2160 at approx. 60 or 100 Mb/s,
# 1920x1080 at approx. 50 Mb/s, at 24, 25 and 30 (29.97) frames a second.
XAVC_SOURCE = "Sony Help Guide, Bit-rate and recording pixels: XAVC S 4K approx. 60 or 100 Mbps, XAVC S HD approx. 50"
for _size, (_wh, _low, _high) in {"uhd": ("3840x2160", 60, 100), "hd": ("1920x1080", 50, 50)}.items():
    for _rate in ("23.976", "25", "29.97"):
        _name = f"h264-xavc-s-{_size}-{_rate}"
        _said = f"{_low} to {_high} Mb/s" if _low != _high else f"about {_high} Mb/s"
        FORMATS[_name] = Format(_name, f"H.264 (Sony XAVC S, {_said}), {_wh} at {_rate}", RATES[_rate],
                                int(_high * 1_000_000 / 8 / RATES[_rate]), XAVC_SOURCE,
                                low_bits_per_s=_low * 1_000_000)

# A camera's H.265 (HEVC), long-GOP and of variable rate as its H.264: GoPro's own documentation of its cameras'
# bit rate control (GoPro Labs, "Extensions", BITR, for HERO10 to HERO13, MAX2 and Bones) says the Protune high bit
# rate setting, HEVC only, is "normally ... around 100Mb/s", at every frame size and rate; the table takes 100 Mb/s
# at 3840x2160 at the rates those cameras record (at 5.3K the frame is the same: the rate does not change with size).
GOPRO_HEVC_SOURCE = ("GoPro Labs, Extensions (github.com/gopro/labs, docs/control/extensions, July 2026): BITR, the "
                     "Protune high bit rate setting (HEVC only), normally around 100 Mb/s")
for _rate in ("23.976", "25", "29.97", "50", "59.94"):
    _name = f"h265-gopro-high-uhd-{_rate}"
    FORMATS[_name] = Format(_name, f"H.265 (GoPro Protune high bit rate, about 100 Mb/s), 3840x2160 at {_rate}",
                            RATES[_rate], int(100 * 1_000_000 / 8 / RATES[_rate]), GOPRO_HEVC_SOURCE)

# TIFF (TIFF 6.0) uncompressed 16-bit RGB, one frame a file as scanners and grading tools write them: 6 bytes a
# pixel, each row a strip (4 bytes of offset and 4 of count a row) and 1 KiB for its header and directory.
TIFF_SOURCE = "TIFF 6.0: 16-bit RGB uncompressed, 6 bytes a pixel, a strip a row (8 bytes), 1 KiB header and IFD"
for _size, (_w, _h) in _CINEMA.items():
    FORMATS[f"tiff-16bit-{_size}-24"] = Format(f"tiff-16bit-{_size}-24", f"TIFF 16-bit RGB, {_w}x{_h} at 24",
                                               Fraction(24), _w * _h * 6 + _h * 8 + 1024, TIFF_SOURCE, "tif")


def families() -> str:
    """The table's names in short: each family's pattern."""
    return ("prores-{422,422-hq,4444}-{hd,uhd}-{23.976,29.97}, dnxhr-{lb,sq,hq,hqx,444}-{2k,uhd,4k}-{23.976,25,29.97} "
            "(4k: hq, hqx, 444), h264-xavc-s-{hd,uhd}-{23.976,25,29.97}, "
            "h265-gopro-high-uhd-{23.976,25,29.97,50,59.94}, dpx-10bit-{2k,4k}-24, exr-half-{2k,4k}-24, "
            "tiff-16bit-{2k,4k}-24")


def named(frame_bytes: int, fps: float, align_bytes: int) -> str:
    """The formats of the table whose frame (rounded up to whole align_bytes) and rate are these, in words: "ProRes
    422 HQ, 3840x2160 at 29.97", "DNxHR HQ or HQX, 3840x2160 at 29.97"; "" where none is (a plan's own frames)."""
    same = [f for f in FORMATS.values()
            if -(-f.frame_bytes // align_bytes) * align_bytes == frame_bytes and abs(float(f.fps) - fps) < 1e-6 * fps]
    if not same:
        return ""
    # a title is its codec (which may hold a comma of its own), then ", " and its frame size and rate
    heads = list(dict.fromkeys(f.title.rsplit(", ", 1)[0] for f in same))
    tails = list(dict.fromkeys(f.title.rsplit(", ", 1)[1] for f in same))
    if len(tails) > 1:
        return " or ".join(f.title for f in same)
    family = heads[0].split(" ")[0]
    if all(h.startswith(family + " ") for h in heads) and len(heads) > 1:
        return f"{family} {' or '.join(h[len(family) + 1:] for h in heads)}, {tails[0]}"
    return f"{' or '.join(heads)}, {tails[0]}"

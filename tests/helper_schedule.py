"""The helper's Poisson schedule for --rate (helper/sb_parallel.c, sb_prepare_arrivals), reproduced: part p's due
times after the measurement's origin, from --seed, drawn as the helper draws them (splitmix64 seeding
xoshiro256**, helper/sb_rng.c; a uniform in (0, 1] from the top 53 bits; exponential gaps at the part's rate). The
tests use it to feed a queue the very arrivals the helper issued at."""

from __future__ import annotations

import math

MASK = (1 << 64) - 1


def _splitmix64(x: int) -> tuple[int, int]:
    x = (x + 0x9E3779B97F4A7C15) & MASK
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return x, z ^ (z >> 31)


def _rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (64 - k))) & MASK


class Xoshiro:
    def __init__(self, seed: int) -> None:
        x, self.s = seed & MASK, []
        for _ in range(4):
            x, v = _splitmix64(x)
            self.s.append(v)

    def next(self) -> int:
        s = self.s
        result = (_rotl((s[1] * 5) & MASK, 7) * 9) & MASK
        t = (s[1] << 17) & MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        return result


def helper_poisson_due_ns(seed: int, part: int, part_rate: float, n: int) -> list[int]:
    """The first n due times (ns after the origin) of part `part` at part_rate requests a second."""
    r = Xoshiro(seed * 0x9E3779B97F4A7C15 + part + 1)
    out, t = [], 0.0
    for _ in range(n):
        out.append(round(t))            # llround: halves away from zero; a sum of doubles is never exactly .5 here
        u = ((r.next() >> 11) + 1.0) / 9007199254740992.0
        t += -math.log(u) * 1e9 / part_rate
    return out

#!/usr/bin/env python3
"""Reads calibration match logs (tools/calibrate_levels.sh output: the
FINAL line and the match name "L<level>-vs-SF<elo>" or "L<level>-vs-L<n>")
and prints each level's rating with its 95% error bar: the Stockfish
anchor plus the measured difference, or for a level measured against
another level, that level's rating plus the difference (the errors add).
Several runs of one level (other openings, other anchors) are pooled,
each weighted by the inverse of its variance.

Usage: tools/ladder_table.py LOG...
"""

import math
import re
import sys

LINE = re.compile(
    r"\[L(\d+)-vs-(SF|L)(\d+)\] FINAL games (\d+)\s+W-D-L (\d+)-(\d+)-(\d+)\s+score ([\d.]+)%\s+"
    r"Elo diff ([+-]\d+) \(95%: ([+-]\d+) \.\. ([+-]\d+)"
)


def main():
    runs = {}
    for path in sys.argv[1:]:
        with open(path) as f:
            for line in f:
                m = LINE.search(line)
                if m:
                    runs.setdefault(int(m.group(1)), []).append({
                        "kind": m.group(2),
                        "opponent": int(m.group(3)),
                        "games": int(m.group(4)),
                        "wdl": f"{m.group(5)}-{m.group(6)}-{m.group(7)}",
                        "score": float(m.group(8)),
                        "diff": int(m.group(9)),
                        "half": (int(m.group(11)) - int(m.group(10))) / 2,
                    })
    rating = {}

    def run_rating(r, seen):
        """One run's (rating, 95% half-width), or None if its anchor is unrated."""
        if r["kind"] == "SF":
            return r["opponent"] + r["diff"], r["half"]
        base = rate(r["opponent"], seen)
        if base is None:
            return None
        return base[0] + r["diff"], base[1] + r["half"]

    def rate(level, seen=()):
        """A level's rating: its runs pooled, each weighted by 1 / variance."""
        if level in rating:
            return rating[level]
        if level not in runs or level in seen:
            return None
        rated = [x for x in (run_rating(r, seen + (level,)) for r in runs[level]) if x]
        if not rated:
            return None
        weights = [1 / max(half, 1) ** 2 for _, half in rated]
        mean = sum(w * elo for w, (elo, _) in zip(weights, rated)) / sum(weights)
        rating[level] = (mean, 1 / math.sqrt(sum(weights)))
        return rating[level]

    print("| level | opponent | games | W-D-L | score | Elo diff | Elo of the run | Elo of the level |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for level in sorted(runs):
        pooled = rate(level)
        for i, r in enumerate(runs[level]):
            opponent = f"SF {r['opponent']}" if r["kind"] == "SF" else f"level {r['opponent']}"
            one = run_rating(r, (level,))
            one = f"{one[0]:.0f} ±{one[1]:.0f}" if one else "?"
            total = ""
            if i == len(runs[level]) - 1:
                total = f"**{pooled[0]:.0f}** ±{pooled[1]:.0f}" if pooled else "?"
            print(f"| {level} | {opponent} | {r['games']} | {r['wdl']} | {r['score']:.1f}% | "
                  f"{r['diff']:+d} | {one} | {total} |")
    steps = sorted(rating)
    for a, b in zip(steps, steps[1:]):
        gap = rating[b][0] - rating[a][0]
        flag = "" if gap >= 150 else "  <- step under 150"
        print(f"level {a} -> {b}: {gap:+.0f}{flag}")


if __name__ == "__main__":
    main()

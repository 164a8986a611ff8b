#!/usr/bin/env python3
"""Reads calibration match logs (tools/calibrate_levels.sh output: the
FINAL line and the match name "L<level>-vs-SF<elo>" or "L<level>-vs-L<n>")
and prints each level's rating with its 95% error bar: the Stockfish
anchor plus the measured difference, or for a level measured against
another level, that level's rating plus the difference (the errors add).

Usage: tools/ladder_table.py LOG...
"""

import re
import sys

LINE = re.compile(
    r"\[L(\d+)-vs-(SF|L)(\d+)\] FINAL games (\d+)\s+W-D-L (\d+)-(\d+)-(\d+)\s+score ([\d.]+)%\s+"
    r"Elo diff ([+-]\d+) \(95%: ([+-]\d+) \.\. ([+-]\d+)"
)


def main():
    results = {}
    for path in sys.argv[1:]:
        with open(path) as f:
            for line in f:
                m = LINE.search(line)
                if m:
                    level = int(m.group(1))
                    results[level] = {
                        "kind": m.group(2),
                        "opponent": int(m.group(3)),
                        "games": int(m.group(4)),
                        "wdl": f"{m.group(5)}-{m.group(6)}-{m.group(7)}",
                        "score": float(m.group(8)),
                        "diff": int(m.group(9)),
                        "half": (int(m.group(11)) - int(m.group(10))) / 2,
                    }
    rating = {}

    def rate(level, seen=()):
        if level in rating:
            return rating[level]
        r = results.get(level)
        if r is None or level in seen:
            return None
        if r["kind"] == "SF":
            rating[level] = (r["opponent"] + r["diff"], r["half"])
        else:
            base = rate(r["opponent"], seen + (level,))
            if base is None:
                return None
            rating[level] = (base[0] + r["diff"], base[1] + r["half"])
        return rating[level]

    print("| level | opponent | games | W-D-L | score | Elo diff | Elo |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for level in sorted(results):
        r = results[level]
        rated = rate(level)
        opponent = f"SF {r['opponent']}" if r["kind"] == "SF" else f"level {r['opponent']}"
        elo = f"**{rated[0]:.0f}** ±{rated[1]:.0f}" if rated else "?"
        print(f"| {level} | {opponent} | {r['games']} | {r['wdl']} | {r['score']:.1f}% | "
              f"{r['diff']:+d} | {elo} |")
    steps = sorted(rating)
    for a, b in zip(steps, steps[1:]):
        gap = rating[b][0] - rating[a][0]
        flag = "" if gap >= 150 else "  <- step under 150"
        print(f"level {a} -> {b}: {gap:+.0f}{flag}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""How long the disk takes to make a small write durable.

Appends --size bytes to a file in DIR and calls fdatasync, --count times,
the way SQLite's write-ahead log commits a transaction (one append and one
sync per commit), and prints the sync times' percentiles. A move's state is
sent to its subscribers only once its batch's commit is durable, so this is
a floor under the load probe's move-to-subscriber latency with the database
in DIR: a move that arrives during a commit waits for that sync and then
for its own.

Example:
  tools/fsync_probe.py /var/lib/rookery --count 2000
"""

import argparse
import os
import tempfile
import time


def percentile(sorted_values, p):
    index = min(len(sorted_values) - 1, int(round(p / 100 * (len(sorted_values) - 1))))
    return sorted_values[index]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", nargs="?", default=tempfile.gettempdir())
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--size", type=int, default=4096, help="bytes appended before each sync")
    ap.add_argument("--interval-ms", type=float, default=2.0,
                    help="pause between commits (the load probe's 1,000 games make 500 moves/s)")
    args = ap.parse_args()

    block = os.urandom(args.size)
    times = []
    with tempfile.NamedTemporaryFile(dir=args.dir, prefix="fsync-probe-") as f:
        fd = f.fileno()
        for _ in range(args.count):
            os.write(fd, block)
            start = time.perf_counter()
            os.fdatasync(fd)
            times.append((time.perf_counter() - start) * 1000)
            time.sleep(args.interval_ms / 1000)
    times.sort()
    summary = "  ".join(f"p{p} {percentile(times, p):.2f} ms" for p in (50, 90, 99))
    print(f"{args.dir}: {args.count} syncs of {args.size} B: {summary}  max {times[-1]:.2f} ms")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The executables a `cargo ... --no-run --message-format=json` run names.

Reads cargo's JSON messages on stdin and prints, one a line and in the
order asked, the executable of each target named on the command line, of
the given kind (test, bench, ...) and from the given package directory.
Exits non-zero, naming them, when any is missing: a renamed target fails
loudly instead of being skipped.

    cargo test --workspace --no-run --message-format=json \
        | scripts/cargo-executables.py --kind test --dir server games lists
"""
import argparse
import json
import os
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--kind", required=True)
parser.add_argument("--dir", required=True, help="the package's directory, e.g. server")
parser.add_argument("names", nargs="+")
args = parser.parse_args()

package = os.sep + args.dir.strip(os.sep) + os.sep
found = {}
for line in sys.stdin:
    message = json.loads(line)
    target = message.get("target", {})
    if (message.get("reason") == "compiler-artifact" and message.get("executable")
            and target.get("kind") == [args.kind] and target.get("name") in args.names
            and package in target.get("src_path", "")):
        found[target["name"]] = message["executable"]
missing = [name for name in args.names if name not in found]
if missing:
    sys.exit(f"no {args.kind} executable built for: {' '.join(missing)}")
print("\n".join(found[name] for name in args.names))

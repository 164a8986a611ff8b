"""EPD files, shared by the tools: the opening book and the tactics suites."""

import chess


def load_epd(path):
    """Every position of the EPD file `path` with its operations (bm, am,
    id, ...), skipping blank lines and # comments."""
    positions = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                positions.append(chess.Board.from_epd(line))
    return positions


def solves(ops, move):
    """Does `move` solve a test position: one of its `bm` moves and none of
    its `am` moves?"""
    return move in ops.get("bm", []) and move not in ops.get("am", [])

// Premoves: while the opponent thinks, the player may queue one move. The
// client cannot know what will be legal after the opponent's reply, so the
// targets offered are where the piece could go by its way of moving on the
// board as it stands, ignoring pieces in the way (as lichess does): the
// server's legal moves decide when the turn comes. A premove that is not
// legal then is dropped, and the player is told.

import { fileOf, rankOf, squareName } from './chess.js';

const BACK_RANK = { w: 0, b: 7 };

const KNIGHT = [[1, 2], [2, 1], [2, -1], [1, -2], [-1, -2], [-2, -1], [-2, 1], [-1, 2]];
const KING = [[1, 0], [1, 1], [0, 1], [-1, 1], [-1, 0], [-1, -1], [0, -1], [1, -1]];
const ROOK = [[1, 0], [-1, 0], [0, 1], [0, -1]];
const BISHOP = [[1, 1], [1, -1], [-1, 1], [-1, -1]];

function onBoard(file, rank) {
  return file >= 0 && file < 8 && rank >= 0 && rank < 8;
}

function targets(piece, square, board, chess960) {
  const [color, role] = piece;
  const file = fileOf(square);
  const rank = rankOf(square);
  const out = [];
  const add = (f, r) => { if (onBoard(f, r)) out.push(squareName(f, r)); };
  const slide = (dirs) => {
    for (const [df, dr] of dirs) for (let step = 1; step < 8; step++) add(file + df * step, rank + dr * step);
  };
  if (role === 'P') {
    const up = color === 'w' ? 1 : -1;
    add(file, rank + up);
    if (rank === (color === 'w' ? 1 : 6)) add(file, rank + 2 * up);
    add(file - 1, rank + up);
    add(file + 1, rank + up);
  } else if (role === 'N') {
    for (const [df, dr] of KNIGHT) add(file + df, rank + dr);
  } else if (role === 'K') {
    for (const [df, dr] of KING) add(file + df, rank + dr);
    if (chess960) {
      // Chess960 castling, written king takes rook: onto each of its own
      // rooks on its back rank.
      if (rank === BACK_RANK[color]) {
        for (let f = 0; f < 8; f++) {
          const there = squareName(f, rank);
          if (board.get(there) === `${color}R`) out.push(there);
        }
      }
    } else if (square === (color === 'w' ? 'e1' : 'e8')) {
      // Castling, from the king's home square.
      add(6, rank);
      add(2, rank);
    }
  } else if (role === 'R') slide(ROOK);
  else if (role === 'B') slide(BISHOP);
  else if (role === 'Q') slide([...ROOK, ...BISHOP]);
  return out;
}

// Map<from, uci[]> of the premoves of `color` ('white' | 'black') on
// `board` (Map<square, "wP">): never onto one's own piece, except a
// Chess960 king onto its rook (`chess960`: castling spelled that way); a
// pawn reaching the last rank premoves a queen promotion.
export function premoveDests(board, color, chess960 = false) {
  const mine = color === 'white' ? 'w' : 'b';
  const dests = new Map();
  for (const [square, piece] of board) {
    if (piece[0] !== mine) continue;
    const last = mine === 'w' ? '8' : '1';
    const castle = (to) => piece[1] === 'K' && board.get(to) === `${mine}R`;
    const moves = [...new Set(targets(piece, square, board, chess960))]
      .filter((to) => (board.get(to) || ' ')[0] !== mine || (chess960 && castle(to)))
      .map((to) => `${square}${to}${piece[1] === 'P' && to[1] === last ? 'q' : ''}`);
    if (moves.length) dests.set(square, moves);
  }
  return dests;
}

// The move to send for a queued premove once it is our turn, or null when
// it is not legal there. A promotion premove was queued as a queen.
export function premoveToPlay(premove, legalMoves) {
  if (!premove) return null;
  return (legalMoves || []).includes(premove) ? premove : null;
}

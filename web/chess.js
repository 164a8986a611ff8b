// Just enough chess to draw positions. The server is the referee: legality,
// check and results always come from its GameState. The client only needs to
// read FEN and to replay already-accepted UCI moves for browsing history.

export const FILES = 'abcdefgh';
export const ROLE_NAMES = { P: 'pawn', N: 'knight', B: 'bishop', R: 'rook', Q: 'queen', K: 'king' };
export const START_FEN = 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1';

export const squareName = (file, rank) => FILES[file] + String(rank + 1);
export const fileOf = (square) => square.charCodeAt(0) - 97;
export const rankOf = (square) => square.charCodeAt(1) - 49;

export function allSquares() {
  const squares = [];
  for (let rank = 0; rank < 8; rank++) for (let file = 0; file < 8; file++) squares.push(squareName(file, rank));
  return squares;
}

// A position is { board: Map<square, "wP">, turn: "white" | "black" }.
export function parseFen(fen) {
  const [placement = '', turn = 'w'] = String(fen).trim().split(/\s+/);
  const board = new Map();
  placement.split('/').forEach((row, index) => {
    const rank = 7 - index;
    let file = 0;
    for (const ch of row) {
      if (ch >= '1' && ch <= '8') {
        file += Number(ch);
      } else if (file < 8 && rank >= 0) {
        const upper = ch.toUpperCase();
        if (ROLE_NAMES[upper]) board.set(squareName(file, rank), (ch === upper ? 'w' : 'b') + upper);
        file += 1;
      }
    }
  });
  return { board, turn: turn === 'b' ? 'black' : 'white' };
}

export function splitUci(uci) {
  return { from: uci.slice(0, 2), to: uci.slice(2, 4), promotion: uci.length > 4 ? uci[4] : null };
}

// The squares a castle puts its king and rook on: the g- and f-files on the
// king's side, the c- and d-files on the queen's, whatever files they
// started from (Chess960's rule, of which standard chess is a case).
export function castleSquares(kingFrom, rookFrom) {
  const rank = rankOf(kingFrom);
  const kingSide = fileOf(rookFrom) > fileOf(kingFrom);
  return { king: squareName(kingSide ? 6 : 2, rank), rook: squareName(kingSide ? 5 : 3, rank) };
}

// Whether `uci` on `board` is a castle written king takes its own rook (a
// Chess960 game's spelling, docs/API.md "Chess960"): its rook's square.
export function castleRook(board, uci) {
  const { from, to } = splitUci(uci);
  const king = board.get(from);
  return king && king[1] === 'K' && board.get(to) === `${king[0]}R` ? to : null;
}

// Plays a move the server already accepted: moves the piece and handles the
// side effects of castling (the rook; written king takes rook in Chess960,
// the king's two squares in standard chess), en passant (the captured pawn)
// and promotion. No legality check: that is the server's job.
export function applyUci(position, uci) {
  const { from, to, promotion } = splitUci(uci);
  const board = new Map(position.board);
  const piece = board.get(from);
  if (!piece) return { board, turn: position.turn === 'white' ? 'black' : 'white' };
  const role = piece[1];
  const rookFrom = castleRook(board, uci);
  if (rookFrom) {
    const squares = castleSquares(from, rookFrom);
    board.delete(from);
    board.delete(rookFrom);
    board.set(squares.king, piece);
    board.set(squares.rook, `${piece[0]}R`);
    return { board, turn: position.turn === 'white' ? 'black' : 'white' };
  }
  board.delete(from);
  if (role === 'K' && Math.abs(fileOf(to) - fileOf(from)) === 2) {
    const rank = rankOf(from);
    const kingSide = fileOf(to) > fileOf(from);
    const rookFrom = squareName(kingSide ? 7 : 0, rank);
    const rookTo = squareName(kingSide ? 5 : 3, rank);
    const rook = board.get(rookFrom);
    if (rook) {
      board.delete(rookFrom);
      board.set(rookTo, rook);
    }
  }
  if (role === 'P' && fileOf(from) !== fileOf(to) && !board.has(to)) {
    board.delete(squareName(fileOf(to), rankOf(from)));
  }
  board.set(to, promotion ? piece[0] + promotion.toUpperCase() : piece);
  return { board, turn: position.turn === 'white' ? 'black' : 'white' };
}

// Positions after 0, 1, ... n plies.
export function positionsOf(initialFen, moves) {
  const positions = [parseFen(initialFen)];
  for (const uci of moves) positions.push(applyUci(positions[positions.length - 1], uci));
  return positions;
}

export function kingSquare(board, color) {
  const code = (color === 'white' ? 'w' : 'b') + 'K';
  for (const [square, piece] of board) if (piece === code) return square;
  return null;
}

export function isStandardStart(fen) {
  return String(fen).trim().split(/\s+/).slice(0, 4).join(' ') === START_FEN.split(' ').slice(0, 4).join(' ');
}

// The piece placement field of a FEN for a board (Map square -> 'wP').
export function placement(board) {
  const rows = [];
  for (let rank = 7; rank >= 0; rank--) {
    let row = '';
    let empty = 0;
    for (let file = 0; file < 8; file++) {
      const piece = board.get(squareName(file, rank));
      if (!piece) {
        empty += 1;
        continue;
      }
      if (empty) row += String(empty);
      empty = 0;
      row += piece[0] === 'w' ? piece[1] : piece[1].toLowerCase();
    }
    rows.push(row + (empty ? String(empty) : ''));
  }
  return rows.join('/');
}


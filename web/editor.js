// The board editor (issue 36): a position set up by hand. Pieces come from
// a palette (click one, then click squares; or drag it onto the board), a
// piece on the board is dragged to another square or off the board to
// remove it; the side to move, castling rights (Chess960 castling with any
// rook) and the en passant square are chosen beside it. The editor only
// writes a FEN: the server's engine says whether the position is legal
// (POST /api/position), in its own words.

import { h, clear } from './dom.js';
import { BoardView } from './board.js';
import { FILES, START_FEN, fileOf, parseFen, placement, rankOf, squareName } from './chess.js';
import { pieceElement, pieceName } from './pieces.js';
import { t } from './i18n.js';

const PALETTE = ['wK', 'wQ', 'wR', 'wB', 'wN', 'wP', 'bK', 'bQ', 'bR', 'bB', 'bN', 'bP'];
const EMPTY_FEN = '8/8/8/8/8/8/8/8 w - - 0 1';

export class BoardEditor {
  // `onChange(fen)` after every edit.
  constructor({ fen = START_FEN, onChange = () => {} } = {}) {
    this.onChange = onChange;
    this.board = new BoardView({ label: t('Board editor') });
    this.board.el.classList.add('editing');
    this.pieces = new Map();
    this.turn = 'white';
    this.castling = { K: false, Q: false, k: false, q: false };
    this.chess960 = false;
    this.enPassant = '-';
    // The palette's chosen piece ('wK'…, or 'erase'), placed by clicks.
    this.tool = null;
    this.picked = null; // a square whose piece moves on the next click
    this.orientation = 'white';

    this.paletteButtons = new Map();
    const paletteButton = (piece) => {
      const button = h('button', {
        type: 'button', class: 'palette-piece', 'aria-pressed': 'false', 'aria-label': pieceName(piece), dataset: { tool: piece },
      }, pieceElement(piece, { automation: false }));
      button.addEventListener('click', () => this.choose(piece));
      button.addEventListener('pointerdown', (event) => this.startDrag(event, piece, null));
      this.paletteButtons.set(piece, button);
      return button;
    };
    const erase = h('button', { type: 'button', class: 'palette-piece erase', 'aria-pressed': 'false', dataset: { tool: 'erase' } }, t('Remove'));
    erase.addEventListener('click', () => this.choose('erase'));
    this.paletteButtons.set('erase', erase);
    this.palette = h('div', { class: 'palette', role: 'group', 'aria-label': t('Pieces') }, PALETTE.map(paletteButton), erase);

    this.turnSelect = h('select', { id: 'editor-turn' },
      h('option', { value: 'white' }, t('White to move')), h('option', { value: 'black' }, t('Black to move')));
    this.turnSelect.addEventListener('change', () => {
      this.turn = this.turnSelect.value;
      this.changed();
    });
    this.castleBoxes = {};
    const castleBox = (key, label) => {
      const box = h('input', { type: 'checkbox', id: `castle-${key === key.toUpperCase() ? 'w' : 'b'}${key.toLowerCase()}` });
      box.addEventListener('change', () => {
        this.castling[key] = box.checked;
        this.changed();
      });
      this.castleBoxes[key] = box;
      return h('label', { class: 'checkbox' }, box, h('span', null, label));
    };
    this.chess960Box = h('input', { type: 'checkbox', id: 'editor-chess960' });
    this.chess960Box.addEventListener('change', () => {
      this.chess960 = this.chess960Box.checked;
      this.changed();
    });
    this.epSelect = h('select', { id: 'editor-ep' });
    this.epSelect.addEventListener('change', () => {
      this.enPassant = this.epSelect.value;
      this.changed();
    });

    const board = this.board.el;
    board.addEventListener('click', (event) => this.onBoardClick(event), { capture: true });
    board.addEventListener('pointerdown', (event) => {
      const square = this.board.squareFromEvent(event);
      if (square && this.pieces.has(square) && this.tool === null) this.startDrag(event, this.pieces.get(square), square);
    }, { capture: true });

    this.el = h('div', { class: 'editor' },
      this.palette,
      h('div', { class: 'editor-options' },
        h('label', { for: 'editor-turn', class: 'visually-hidden' }, t('Side to move')), this.turnSelect,
        h('fieldset', { class: 'castling' }, h('legend', null, t('Castling')),
          castleBox('K', 'White O-O'), castleBox('Q', 'White O-O-O'), castleBox('k', 'Black O-O'), castleBox('q', 'Black O-O-O'),
          h('label', { class: 'checkbox' }, this.chess960Box, h('span', null, t('Chess960 castling (any rook)')))),
        h('label', { for: 'editor-ep' }, t('En passant')), this.epSelect),
      h('div', { class: 'actions' },
        h('button', { type: 'button', onclick: () => this.load(START_FEN) }, t('Start position')),
        h('button', { type: 'button', onclick: () => this.load(EMPTY_FEN) }, t('Clear board'))));
    this.load(fen);
  }

  choose(tool) {
    this.tool = this.tool === tool ? null : tool;
    this.picked = null;
    for (const [key, button] of this.paletteButtons) button.setAttribute('aria-pressed', String(key === this.tool));
    this.draw();
  }

  // A FEN read into the editor (the caller has it checked by the server
  // when it matters); castling letters of any rook are kept.
  load(fen) {
    const fields = String(fen).trim().split(/\s+/);
    this.pieces = parseFen(fen).board;
    this.turn = fields[1] === 'b' ? 'black' : 'white';
    const rights = fields[2] && fields[2] !== '-' ? fields[2] : '';
    this.chess960 = /[A-Ha-h]/.test(rights.replace(/[KQkq]/g, ''));
    this.castling = {
      K: /[K]/.test(rights) || this.rightByFile(rights, 'white', 'K'),
      Q: /[Q]/.test(rights) || this.rightByFile(rights, 'white', 'Q'),
      k: /[k]/.test(rights) || this.rightByFile(rights, 'black', 'k'),
      q: /[q]/.test(rights) || this.rightByFile(rights, 'black', 'q'),
    };
    this.enPassant = fields[3] && /^[a-h][36]$/.test(fields[3]) ? fields[3] : '-';
    this.changed();
  }

  // Whether Shredder-FEN letters (`HAha`) name a rook on that side of the king.
  rightByFile(rights, color, key) {
    const king = this.kingOf(color);
    if (!king) return false;
    const letters = [...rights].filter((ch) => (color === 'white' ? /[A-H]/ : /[a-h]/).test(ch));
    return letters.some((ch) => {
      const file = ch.toLowerCase().charCodeAt(0) - 97;
      return key.toLowerCase() === 'k' ? file > fileOf(king) : file < fileOf(king);
    });
  }

  kingOf(color) {
    for (const [square, piece] of this.pieces) if (piece === `${color[0]}K`) return square;
    return null;
  }

  onBoardClick(event) {
    const square = this.board.squareFromEvent(event);
    if (!square) return;
    event.stopPropagation();
    if (this.suppressClick) return;
    if (this.tool === 'erase') {
      this.pieces.delete(square);
    } else if (this.tool) {
      if (this.pieces.get(square) === this.tool) this.pieces.delete(square);
      else this.pieces.set(square, this.tool);
    } else if (this.picked && this.picked !== square) {
      this.pieces.set(square, this.pieces.get(this.picked));
      this.pieces.delete(this.picked);
      this.picked = null;
    } else {
      this.picked = this.pieces.has(square) && this.picked !== square ? square : null;
    }
    this.changed();
  }

  // A piece dragged from the palette (`from` null) or from a square: put
  // where it is dropped; a board piece dropped off the board is removed.
  startDrag(event, piece, from) {
    if (event.button !== 0) return;
    const start = { x: event.clientX, y: event.clientY };
    let ghost = null;
    const move = (moved) => {
      if (moved.pointerId !== event.pointerId) return;
      if (!ghost) {
        if (Math.hypot(moved.clientX - start.x, moved.clientY - start.y) < 4) return;
        const size = this.board.el.getBoundingClientRect().width / 8;
        ghost = pieceElement(piece, { automation: false });
        ghost.classList.add('ghost');
        ghost.style.width = `${size}px`;
        ghost.style.height = `${size}px`;
        document.body.append(ghost);
      }
      const size = ghost.getBoundingClientRect().width;
      ghost.style.transform = `translate(${moved.clientX - size / 2}px, ${moved.clientY - size / 2}px)`;
      moved.preventDefault();
    };
    const up = (ended) => {
      if (ended.pointerId !== event.pointerId) return;
      window.removeEventListener('pointermove', move);
      window.removeEventListener('pointerup', up);
      window.removeEventListener('pointercancel', up);
      if (!ghost) return;
      ghost.remove();
      // The click that ends a drag is not a placement of its own.
      this.suppressClick = true;
      setTimeout(() => { this.suppressClick = false; }, 0);
      if (ended.type === 'pointercancel') return;
      const under = document.elementFromPoint(ended.clientX, ended.clientY);
      const target = under && under.closest('[data-square]');
      const to = target && this.board.el.contains(target) ? target.dataset.square : null;
      if (from) this.pieces.delete(from);
      if (to) this.pieces.set(to, piece);
      this.picked = null;
      this.changed();
    };
    window.addEventListener('pointermove', move);
    window.addEventListener('pointerup', up);
    window.addEventListener('pointercancel', up);
  }

  setOrientation(orientation) {
    this.orientation = orientation;
    this.draw();
  }

  changed() {
    this.fixRights();
    this.draw();
    this.onChange(this.fen());
  }

  // Rights the position cannot have are dropped (a king or rook gone from
  // its place), and the en passant choices follow the side to move.
  fixRights() {
    for (const key of ['K', 'Q', 'k', 'q']) {
      if (this.castling[key] && !this.castleRook(key)) this.castling[key] = false;
    }
    const choices = this.enPassantChoices();
    if (!choices.includes(this.enPassant)) this.enPassant = '-';
    clear(this.epSelect, h('option', { value: '-' }, t('None')), choices.map((square) => h('option', { value: square }, square)));
    this.epSelect.value = this.enPassant;
    this.turnSelect.value = this.turn;
    this.chess960Box.checked = this.chess960;
    for (const [key, box] of Object.entries(this.castleBoxes)) {
      box.checked = this.castling[key];
      box.disabled = !this.castleRook(key);
    }
  }

  // The rook a castling right would use: the outermost rook on that side
  // of the king on its back rank; in standard chess only with the king on
  // e1/e8 and the rook in its corner.
  castleRook(key) {
    const color = key === key.toUpperCase() ? 'white' : 'black';
    const rank = color === 'white' ? 0 : 7;
    const king = this.kingOf(color);
    if (!king || rankOf(king) !== rank) return null;
    const kingside = key.toLowerCase() === 'k';
    if (!this.chess960) {
      if (fileOf(king) !== 4) return null;
      const corner = squareName(kingside ? 7 : 0, rank);
      return this.pieces.get(corner) === `${color[0]}R` ? corner : null;
    }
    const files = kingside ? [7, 6, 5, 4, 3, 2, 1] : [0, 1, 2, 3, 4, 5, 6];
    for (const file of files) {
      if (kingside ? file <= fileOf(king) : file >= fileOf(king)) break;
      const square = squareName(file, rank);
      if (this.pieces.get(square) === `${color[0]}R`) return square;
    }
    return null;
  }

  // Squares a pawn of the side not to move could just have passed.
  enPassantChoices() {
    const mover = this.turn === 'white' ? 'w' : 'b';
    const other = mover === 'w' ? 'b' : 'w';
    const [pawnRank, passedRank, startRank] = mover === 'w' ? [4, 5, 6] : [3, 2, 1];
    const choices = [];
    for (let file = 0; file < 8; file++) {
      const pawn = squareName(file, pawnRank);
      if (this.pieces.get(pawn) !== `${other}P`) continue;
      if (this.pieces.has(squareName(file, passedRank)) || this.pieces.has(squareName(file, startRank))) continue;
      choices.push(squareName(file, passedRank));
    }
    return choices;
  }

  fen() {
    let rights = '';
    for (const key of ['K', 'Q', 'k', 'q']) {
      if (!this.castling[key]) continue;
      // Chess960 names the rook's file (Shredder-FEN), which any rook
      // placement reads the same.
      rights += this.chess960 ? (key === key.toUpperCase() ? FILES[fileOf(this.castleRook(key))].toUpperCase() : FILES[fileOf(this.castleRook(key))]) : key;
    }
    return `${placement(this.pieces)} ${this.turn === 'white' ? 'w' : 'b'} ${rights || '-'} ${this.enPassant} 0 1`;
  }

  draw() {
    this.board.set({ position: { board: this.pieces }, orientation: this.orientation });
    for (const [square, el] of this.board.squares) el.classList.toggle('selected', square === this.picked);
  }
}

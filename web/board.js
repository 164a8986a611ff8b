// The board: 64 square elements (data-square="e4") holding piece elements
// (data-piece="wP"). It never decides what is legal or where pieces stand:
// the game page hands it the server's position and legal moves, and the
// board reports the UCI move the user picked through `onMove`. Until the
// server's next state arrives the board keeps showing the old position.
//
// Input: click a piece then a target (mouse, touch or keyboard, as squares
// are buttons), or drag a piece with the pointer. Both paths end in tryMove.
// A click that neither picks nor moves, and a right-click, report
// `onCancel` (the game page drops a queued premove).
//
// A move arriving as a new position slides its piece from its old square
// (a short Web Animations transform), except with prefers-reduced-motion.

import { h } from './dom.js';
import { FILES, ROLE_NAMES, castleRook, castleSquares, fileOf, rankOf, squareName } from './chess.js';
import { pieceElement, pieceName } from './pieces.js';
import { t } from './i18n.js';

const DRAG_THRESHOLD_PX = 4;
const ANIMATION_MS = 160;
const reducedMotion = window.matchMedia ? window.matchMedia('(prefers-reduced-motion: reduce)') : null;
const PROMOTION_ROLES = ['q', 'r', 'b', 'n'];

export class BoardView {
  constructor({ onMove = () => {}, onCancel = () => {}, mini = false, label = t('Chess board') } = {}) {
    this.onMove = onMove;
    this.onCancel = onCancel;
    this.premove = null;
    this.animations = 0;
    this.dropped = null;
    // Arrow keys move the focus between squares only when the focus came
    // from the keyboard; after a click or tap they step through the moves.
    this.pointerMode = false;
    this.pointerPressed = false;
    this.mini = mini;
    this.orientation = 'white';
    this.pieces = new Map();
    this.squares = new Map();
    this.dests = new Map();
    this.lastMove = null;
    this.check = null;
    this.selected = null;
    this.focusSquare = 'e2';
    this.drag = null;
    this.suppressClick = false;
    this.promotion = null;

    this.el = h('div', { class: mini ? 'board mini' : 'board', role: mini ? 'img' : 'group', 'aria-label': label });
    if (!mini) {
      this.el.addEventListener('click', (event) => this.onClick(event));
      this.el.addEventListener('keydown', (event) => this.onKeyDown(event));
      this.el.addEventListener('pointerdown', (event) => this.onPointerDown(event));
      this.el.addEventListener('pointerdown', () => {
        this.pointerPressed = true;
        this.pointerMode = true;
      }, { capture: true });
      window.addEventListener('pointerup', () => { this.pointerPressed = false; }, { capture: true });
      this.el.addEventListener('focusin', () => {
        if (!this.pointerPressed) this.pointerMode = false;
      });
      this.el.addEventListener('contextmenu', (event) => {
        event.preventDefault();
        this.selected = null;
        this.paint();
        this.onCancel();
      });
      this.onPointerMove = this.onPointerMove.bind(this);
      this.onPointerUp = this.onPointerUp.bind(this);
    }
    this.build();
  }

  // position: { board: Map }, dests: Map<from, uci[]> (empty when the user
  // may not move), lastMove: [from, to] | null, check: square | null,
  // premove: [from, to] | null (a queued premove, highlighted).
  set({ position, dests = new Map(), lastMove = null, check = null, orientation = this.orientation, premove = null }) {
    let turned = false;
    if (orientation !== this.orientation) {
      this.orientation = orientation;
      this.build();
      turned = true;
    }
    const before = new Map(this.pieces);
    const previousLast = this.lastMove;
    for (const [square, el] of this.squares) {
      const want = position.board.get(square) || null;
      const have = this.pieces.get(square) || null;
      if (want !== have) {
        const old = el.querySelector('.piece');
        if (old) old.remove();
        if (want) el.append(pieceElement(want, { automation: !this.mini }));
        if (want) this.pieces.set(square, want);
        else this.pieces.delete(square);
      }
    }
    const moved = lastMove && (!previousLast || previousLast[0] !== lastMove[0] || previousLast[1] !== lastMove[1]);
    if (moved && !turned && !this.mini) this.animate(before, lastMove[0], lastMove[1]);
    if (moved) this.dropped = null;
    this.lastMove = lastMove;
    this.check = check;
    this.dests = dests;
    this.premove = premove;
    if (this.selected && !this.dests.has(this.selected)) this.selected = null;
    if (this.promotion && !this.dests.has(this.promotion.from)) this.closePromotion();
    if (this.drag && !this.dests.has(this.drag.from)) this.endDrag();
    this.paint();
  }

  // Slides the piece now on `to` from `from`, when the new position is the
  // old one with that piece moved (not a jump through the history, not a
  // piece the user just dropped there by dragging).
  animate(before, from, to) {
    const piece = this.pieces.get(to);
    if (!piece || before.get(from) !== piece || before.get(to) === piece || this.pieces.has(from)) return;
    if (this.dropped === to || (reducedMotion && reducedMotion.matches)) return;
    const el = this.squares.get(to).querySelector('.piece');
    const a = this.squares.get(from).getBoundingClientRect();
    const b = this.squares.get(to).getBoundingClientRect();
    if (!el || typeof el.animate !== 'function' || !a.width) return;
    el.animate([
      { transform: `translate(${a.left - b.left}px, ${a.top - b.top}px)` },
      { transform: 'translate(0, 0)' },
    ], { duration: ANIMATION_MS, easing: 'ease-out' });
    this.animations += 1;
    this.el.dataset.animations = String(this.animations);
  }

  build() {
    this.el.replaceChildren();
    this.squares.clear();
    this.pieces.clear();
    for (let row = 0; row < 8; row++) {
      for (let col = 0; col < 8; col++) {
        const rank = this.orientation === 'white' ? 7 - row : row;
        const file = this.orientation === 'white' ? col : 7 - col;
        const name = squareName(file, rank);
        const color = (file + rank) % 2 === 1 ? 'light' : 'dark';
        const el = this.mini
          ? h('div', { class: `sq ${color}` })
          : h('button', { type: 'button', class: `sq ${color}`, tabindex: '-1', dataset: { square: name } });
        if (!this.mini) {
          if (col === 0) el.append(h('span', { class: 'coord rank', 'aria-hidden': 'true' }, String(rank + 1)));
          if (row === 7) el.append(h('span', { class: 'coord file', 'aria-hidden': 'true' }, FILES[file]));
        }
        this.squares.set(name, el);
        this.el.append(el);
      }
    }
    if (this.promotion) this.closePromotion();
  }

  // Map<to, uci[]> of the moves from `from`. A castle can be made by
  // putting the king on either of its two squares: the one the move names
  // (the rook's in Chess960, where castling is written king takes rook; the
  // king's landing square in standard chess) and the other one, where no
  // other move of the king goes (a king step there keeps that square).
  targetsOf(from) {
    const targets = new Map();
    const others = [];
    for (const uci of this.dests.get(from) || []) {
      const to = uci.slice(2, 4);
      if (!targets.has(to)) targets.set(to, []);
      targets.get(to).push(uci);
      const other = castleOtherSquare(this.pieces, uci);
      if (other && other !== from) others.push([other, uci]);
    }
    for (const [square, uci] of others) if (!targets.has(square)) targets.set(square, [uci]);
    return targets;
  }

  paint() {
    const targets = this.selected ? this.targetsOf(this.selected) : new Map();
    const fromPiece = this.selected ? this.pieces.get(this.selected) : null;
    for (const [square, el] of this.squares) {
      const isLast = !!this.lastMove && (this.lastMove[0] === square || this.lastMove[1] === square);
      const isDest = targets.has(square);
      // A capture: the target holds a piece, or a pawn moves diagonally (en passant).
      // (A king put on its own rook castles: no capture.)
      const there = this.pieces.get(square);
      const isCapture = isDest && ((there && !(fromPiece && there[0] === fromPiece[0])) || (fromPiece && fromPiece[1] === 'P' && fileOf(square) !== fileOf(this.selected)));
      el.classList.toggle('last-move', isLast);
      el.classList.toggle('check', this.check === square);
      el.classList.toggle('selected', this.selected === square);
      el.classList.toggle('dest', isDest && !isCapture);
      el.classList.toggle('capture', isCapture);
      el.classList.toggle('movable', this.dests.has(square));
      el.classList.toggle('premove', !!this.premove && (this.premove[0] === square || this.premove[1] === square));
      if (!this.mini) {
        const piece = this.pieces.get(square);
        let label = `${square}, ${piece ? pieceName(piece) : 'empty'}`;
        if (this.selected === square) label += ', selected';
        if (isDest) label += isCapture ? t(', capture') : t(', legal move');
        if (this.check === square) label += t(', in check');
        if (this.premove && this.premove[0] === square) label += t(', premove from');
        if (this.premove && this.premove[1] === square) label += t(', premove to');
        el.setAttribute('aria-label', label);
        el.tabIndex = square === this.focusSquare ? 0 : -1;
      }
    }
  }

  squareFromEvent(event) {
    const el = event.target instanceof Element ? event.target.closest('[data-square]') : null;
    return el && this.el.contains(el) ? el.dataset.square : null;
  }

  onClick(event) {
    if (this.suppressClick) return;
    const square = this.squareFromEvent(event);
    if (!square) return;
    this.focusSquare = square;
    this.activate(square);
  }

  activate(square) {
    if (this.promotion) this.closePromotion();
    if (this.selected && this.targetsOf(this.selected).has(square)) {
      this.tryMove(this.selected, square);
      return;
    }
    if (this.dests.has(square) && this.selected !== square) {
      this.selected = square;
    } else {
      this.selected = null;
      this.onCancel();
    }
    this.paint();
  }

  tryMove(from, to) {
    const candidates = this.targetsOf(from).get(to) || [];
    if (candidates.length === 0) return;
    if (candidates.length > 1) {
      this.openPromotion(from, to, candidates);
      return;
    }
    this.selected = null;
    this.paint();
    this.onMove(candidates[0]);
  }

  openPromotion(from, to, candidates) {
    this.closePromotion();
    const color = (this.pieces.get(from) || 'w')[0];
    const choices = PROMOTION_ROLES.filter((role) => candidates.some((uci) => uci[4] === role));
    const dialog = h('div', { class: 'promotion', role: 'dialog', 'aria-label': t('Promote pawn to') },
      h('p', null, t('Promote to')),
      h('div', { class: 'promotion-choices' },
        choices.map((role) => {
          const button = h('button', {
            type: 'button',
            class: 'promotion-choice',
            dataset: { promotion: role },
            'aria-label': t('Promote to {role, select, q {queen} r {rook} b {bishop} other {knight}}', { role }),
          });
          button.append(pieceElement(color + role.toUpperCase(), { automation: false }));
          button.addEventListener('click', (event) => {
            event.stopPropagation();
            this.closePromotion();
            this.selected = null;
            this.paint();
            this.onMove(`${from}${to}${role}`);
          });
          return button;
        })),
      h('button', { type: 'button', class: 'promotion-cancel', onclick: (event) => { event.stopPropagation(); this.closePromotion(); } }, t('Cancel')));
    dialog.addEventListener('click', (event) => {
      // A click beside the choices cancels, like Escape.
      event.stopPropagation();
      if (event.target === dialog) this.closePromotion();
    });
    dialog.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.stopPropagation();
        this.closePromotion();
      }
    });
    this.promotion = { from, to, dialog };
    this.el.append(dialog);
    dialog.querySelector('button').focus();
  }

  closePromotion() {
    if (!this.promotion) return;
    this.promotion.dialog.remove();
    this.promotion = null;
  }

  onKeyDown(event) {
    if (!this.squareFromEvent(event)) return;
    const steps = { ArrowUp: [0, 1], ArrowDown: [0, -1], ArrowLeft: [-1, 0], ArrowRight: [1, 0] };
    const step = steps[event.key];
    if (event.key === 'Escape') {
      this.selected = null;
      this.paint();
      this.onCancel();
      return;
    }
    if (!step || this.pointerMode) return;
    event.preventDefault();
    event.stopPropagation();
    const sign = this.orientation === 'white' ? 1 : -1;
    const file = Math.min(7, Math.max(0, fileOf(this.focusSquare) + step[0] * sign));
    const rank = Math.min(7, Math.max(0, rankOf(this.focusSquare) + step[1] * sign));
    this.focusSquare = squareName(file, rank);
    this.paint();
    this.squares.get(this.focusSquare).focus();
  }

  onPointerDown(event) {
    if (event.button !== 0 || this.promotion) return;
    const square = this.squareFromEvent(event);
    if (!square || !this.dests.has(square)) return;
    this.endDrag();
    this.drag = { from: square, x: event.clientX, y: event.clientY, pointerId: event.pointerId, ghost: null };
    window.addEventListener('pointermove', this.onPointerMove);
    window.addEventListener('pointerup', this.onPointerUp);
    window.addEventListener('pointercancel', this.onPointerUp);
  }

  onPointerMove(event) {
    const drag = this.drag;
    if (!drag || event.pointerId !== drag.pointerId) return;
    if (!drag.ghost) {
      if (Math.hypot(event.clientX - drag.x, event.clientY - drag.y) < DRAG_THRESHOLD_PX) return;
      const source = this.squares.get(drag.from);
      const piece = source.querySelector('.piece');
      if (!piece) return;
      const size = source.getBoundingClientRect().width;
      drag.ghost = pieceElement(this.pieces.get(drag.from), { automation: false });
      drag.ghost.classList.add('ghost');
      drag.ghost.style.width = `${size}px`;
      drag.ghost.style.height = `${size}px`;
      document.body.append(drag.ghost);
      piece.classList.add('dragging');
      this.selected = drag.from;
      this.paint();
    }
    const size = drag.ghost.getBoundingClientRect().width;
    drag.ghost.style.transform = `translate(${event.clientX - size / 2}px, ${event.clientY - size / 2}px)`;
    event.preventDefault();
  }

  onPointerUp(event) {
    const drag = this.drag;
    if (!drag || event.pointerId !== drag.pointerId) return;
    const dragged = !!drag.ghost;
    this.endDrag();
    if (!dragged || event.type === 'pointercancel') return;
    // The click that follows a drag must not count as a second selection.
    this.suppressClick = true;
    setTimeout(() => { this.suppressClick = false; }, 0);
    const under = document.elementFromPoint(event.clientX, event.clientY);
    const target = under && under.closest('[data-square]');
    const to = target && this.el.contains(target) ? target.dataset.square : null;
    if (to && to !== drag.from && this.targetsOf(drag.from).has(to)) {
      this.dropped = to;
      this.tryMove(drag.from, to);
    } else if (to !== drag.from) {
      this.selected = null;
      this.paint();
    }
  }

  endDrag() {
    const drag = this.drag;
    if (!drag) return;
    this.drag = null;
    window.removeEventListener('pointermove', this.onPointerMove);
    window.removeEventListener('pointerup', this.onPointerUp);
    window.removeEventListener('pointercancel', this.onPointerUp);
    if (drag.ghost) drag.ghost.remove();
    for (const piece of this.el.querySelectorAll('.piece.dragging')) piece.classList.remove('dragging');
  }
}

// The other square a castle `uci` can be made on (see `targetsOf`): the
// king's landing square of a castle written king takes rook, the rook's
// square of one written as the king's two-square move; null for any other
// move.
function castleOtherSquare(board, uci) {
  const from = uci.slice(0, 2);
  const to = uci.slice(2, 4);
  const king = board.get(from);
  if (!king || king[1] !== 'K') return null;
  const rook = castleRook(board, uci);
  if (rook) return castleSquares(from, rook).king;
  if (rankOf(from) !== rankOf(to) || Math.abs(fileOf(to) - fileOf(from)) !== 2) return null;
  const corner = squareName(fileOf(to) > fileOf(from) ? 7 : 0, rankOf(from));
  return board.get(corner) === `${king[0]}R` ? corner : null;
}

// Groups the server's legal moves by origin square.
export function destsOf(legalMoves) {
  const dests = new Map();
  for (const uci of legalMoves || []) {
    const from = uci.slice(0, 2);
    if (!dests.has(from)) dests.set(from, []);
    dests.get(from).push(uci);
  }
  return dests;
}

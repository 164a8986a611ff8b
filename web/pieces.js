// Chess pieces drawn as our own SVG silhouettes (viewBox 0 0 100 100), in
// two sets: "classic" (curved outlines) and "flat" (straight-edged
// geometric shapes). Colour comes from CSS (.piece.w / .piece.b), so one
// drawing serves both sides. `detail` strokes are the inner lines that must
// contrast with the fill. The set in use is a preference (settings.js);
// changing it redraws every piece on the page.

import { ROLE_NAMES } from './chess.js';

const SVG_NS = 'http://www.w3.org/2000/svg';

const BASE = 'M24 82 H76 L78 92 H22 Z';

const SHAPES = {
  P: [
    ['circle', { cx: 50, cy: 30, r: 12 }],
    ['path', { d: 'M39 44 Q50 38 61 44 L57 52 Q60 66 70 80 H30 Q40 66 43 52 Z' }],
    ['path', { d: BASE }],
  ],
  R: [
    ['path', { d: 'M26 20 H36 V28 H44 V20 H56 V28 H64 V20 H74 V38 L68 44 V70 L74 76 V82 H26 V76 L32 70 V44 L26 38 Z' }],
    ['path', { d: BASE }],
    ['path', { class: 'detail', d: 'M32 44 H68 M32 70 H68' }],
  ],
  N: [
    ['path', { d: 'M30 82 C34 70 44 64 46 54 C40 58 34 62 28 62 L22 60 C17 56 18 50 24 46 L38 28 C42 22 48 20 52 20 L56 9 L63 20 C76 30 80 52 74 82 Z' }],
    ['path', { d: BASE }],
    ['circle', { class: 'eye', cx: 43, cy: 34, r: 3 }],
    ['path', { class: 'detail', d: 'M64 26 C70 40 71 58 68 76' }],
  ],
  B: [
    ['circle', { cx: 50, cy: 13, r: 6 }],
    ['path', { d: 'M50 20 C63 29 69 44 62 60 H38 C31 44 37 29 50 20 Z' }],
    ['path', { d: 'M36 60 H64 V68 H36 Z' }],
    ['path', { d: 'M40 68 L34 82 H66 L60 68 Z' }],
    ['path', { d: BASE }],
    ['path', { class: 'detail', d: 'M55 32 L46 45' }],
  ],
  Q: [
    ['path', { d: 'M28 74 L17 36 L31 56 L34 26 L43 54 L50 20 L57 54 L66 26 L69 56 L83 36 L72 74 Z' }],
    ['circle', { cx: 17, cy: 34, r: 5 }],
    ['circle', { cx: 34, cy: 24, r: 5 }],
    ['circle', { cx: 50, cy: 17, r: 5 }],
    ['circle', { cx: 66, cy: 24, r: 5 }],
    ['circle', { cx: 83, cy: 34, r: 5 }],
    ['path', { d: 'M28 74 H72 L76 82 H24 Z' }],
    ['path', { d: BASE }],
  ],
  K: [
    ['path', { d: 'M46 6 H54 V14 H62 V22 H54 V32 H46 V22 H38 V14 H46 Z' }],
    ['path', { d: 'M50 38 C62 28 86 34 78 56 L70 74 H30 L22 56 C14 34 38 28 50 38 Z' }],
    ['path', { d: 'M28 74 H72 L76 82 H24 Z' }],
    ['path', { d: BASE }],
    ['path', { class: 'detail', d: 'M50 40 V72 M32 64 Q50 58 68 64' }],
  ],
};

// Flat: each piece a few straight-edged shapes on a plinth.
const PLINTH = 'M22 84 H78 V92 H22 Z';

const FLAT = {
  P: [
    ['circle', { cx: 50, cy: 32, r: 13 }],
    ['path', { d: 'M40 48 H60 L68 84 H32 Z' }],
    ['path', { d: PLINTH }],
  ],
  R: [
    ['path', { d: 'M27 16 H38 V25 H45 V16 H55 V25 H62 V16 H73 V36 H65 V74 H35 V36 H27 Z' }],
    ['path', { d: 'M28 74 H72 V84 H28 Z' }],
    ['path', { d: PLINTH }],
  ],
  N: [
    ['path', { d: 'M28 84 L36 62 L46 52 L30 58 L20 54 L18 46 L40 22 L48 10 L54 20 L64 24 L74 44 L76 84 Z' }],
    ['path', { d: PLINTH }],
    ['circle', { class: 'eye', cx: 42, cy: 32, r: 3.5 }],
  ],
  B: [
    ['circle', { cx: 50, cy: 11, r: 6 }],
    ['path', { d: 'M50 18 L66 42 L58 62 H42 L34 42 Z' }],
    ['path', { d: 'M36 62 H64 V70 H36 Z' }],
    ['path', { d: 'M40 70 H60 L70 84 H30 Z' }],
    ['path', { d: PLINTH }],
    ['path', { class: 'detail', d: 'M56 34 L46 46' }],
  ],
  Q: [
    ['path', { d: 'M26 76 L20 30 L32 54 L36 20 L44 48 L50 14 L56 48 L64 20 L68 54 L80 30 L74 76 Z' }],
    ['circle', { cx: 20, cy: 28, r: 5 }],
    ['circle', { cx: 36, cy: 18, r: 5 }],
    ['circle', { cx: 50, cy: 12, r: 5 }],
    ['circle', { cx: 64, cy: 18, r: 5 }],
    ['circle', { cx: 80, cy: 28, r: 5 }],
    ['path', { d: 'M26 76 H74 V84 H26 Z' }],
    ['path', { d: PLINTH }],
  ],
  K: [
    ['path', { d: 'M45 4 H55 V12 H63 V22 H55 V30 H45 V22 H37 V12 H45 Z' }],
    ['path', { d: 'M24 38 L50 30 L76 38 L68 76 H32 Z' }],
    ['path', { d: 'M28 76 H72 V84 H28 Z' }],
    ['path', { d: PLINTH }],
    ['path', { class: 'detail', d: 'M34 60 H66' }],
  ],
};

export const PIECE_SETS = {
  classic: { label: 'Classic', shapes: SHAPES },
  flat: { label: 'Flat', shapes: FLAT },
};

let pieceSet = 'classic';
const templates = new Map();
// The code ("wP") of every piece element made, to redraw it in another set.
const codes = new WeakMap();

function template(role) {
  const key = `${pieceSet}:${role}`;
  let svg = templates.get(key);
  if (!svg) {
    svg = document.createElementNS(SVG_NS, 'svg');
    svg.setAttribute('viewBox', '0 0 100 100');
    svg.setAttribute('aria-hidden', 'true');
    svg.setAttribute('focusable', 'false');
    svg.setAttribute('class', `pieces-${pieceSet}`);
    for (const [tag, attrs] of PIECE_SETS[pieceSet].shapes[role]) {
      const shape = document.createElementNS(SVG_NS, tag);
      for (const [name, value] of Object.entries(attrs)) shape.setAttribute(name, String(value));
      svg.append(shape);
    }
    templates.set(key, svg);
  }
  return svg.cloneNode(true);
}

export function currentPieceSet() {
  return pieceSet;
}

// Draws pieces in `name`'s set from now on, and redraws those on the page.
export function setPieceSet(name) {
  if (!PIECE_SETS[name] || name === pieceSet) return;
  pieceSet = name;
  for (const el of document.querySelectorAll('.piece')) {
    const code = codes.get(el);
    if (code) el.replaceChildren(template(code[1]));
  }
}

export function pieceName(code) {
  return `${code[0] === 'w' ? 'white' : 'black'} ${ROLE_NAMES[code[1]]}`;
}

// A piece element. `automation` adds data-piece="wP", the hook of the
// contract; the small boards of the watch list leave it out so the game
// board is the only one a script can find.
export function pieceElement(code, { automation = true } = {}) {
  const el = document.createElement('span');
  el.className = `piece ${code[0]}`;
  if (automation) el.dataset.piece = code;
  codes.set(el, code);
  el.append(template(code[1]));
  return el;
}

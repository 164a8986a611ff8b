// Chess pieces drawn as our own SVG silhouettes (viewBox 0 0 100 100).
// Colour comes from CSS (.piece.w / .piece.b), so one drawing serves both
// sides. `detail` strokes are the inner lines that must contrast with the fill.

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

const templates = new Map();

function template(role) {
  let svg = templates.get(role);
  if (!svg) {
    svg = document.createElementNS(SVG_NS, 'svg');
    svg.setAttribute('viewBox', '0 0 100 100');
    svg.setAttribute('aria-hidden', 'true');
    svg.setAttribute('focusable', 'false');
    for (const [tag, attrs] of SHAPES[role]) {
      const shape = document.createElementNS(SVG_NS, tag);
      for (const [name, value] of Object.entries(attrs)) shape.setAttribute(name, String(value));
      svg.append(shape);
    }
    templates.set(role, svg);
  }
  return svg.cloneNode(true);
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
  el.append(template(code[1]));
  return el;
}

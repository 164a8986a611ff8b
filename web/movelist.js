// The move list of the game page and its history (methods of GameView,
// gameview.js): the moves in SAN by move number, a click on one shows
// that position, the first/previous/next/last buttons, the current move
// kept in view inside the list's own box.

import { h, clear, pathIcon } from './dom.js';
import { t } from './i18n.js';

export const moveListMethods = {
  // First, previous, next and last position: drawn buttons.
  makeNavButtons() {
    return {
      first: h('button', { type: 'button', 'aria-label': t('First position'), onclick: () => this.goTo(0) }, icon('first')),
      prev: h('button', { type: 'button', 'aria-label': t('Previous move'), onclick: () => this.step(-1) }, icon('prev')),
      next: h('button', { type: 'button', 'aria-label': t('Next move'), onclick: () => this.step(1) }, icon('next')),
      last: h('button', { type: 'button', 'aria-label': t('Last move'), onclick: () => this.goTo(Infinity) }, icon('last')),
    };
  },

  step(delta) {
    const current = this.viewPly === null ? this.game.moves.length : this.viewPly;
    this.goTo(current + delta);
  },

  goTo(ply) {
    const last = this.game.moves.length;
    const target = Math.max(0, Math.min(last, ply));
    this.viewPly = target >= last ? null : target;
    this.render();
  },

  renderMoves(ply) {
    const game = this.game;
    if (this.renderedMoves !== game.moves.length) {
      this.renderedMoves = game.moves.length;
      const fields = String(game.initial_fen).trim().split(/\s+/);
      const blackFirst = fields[1] === 'b';
      let number = Number(fields[5]) || 1;
      const rows = [];
      let row = null;
      game.san.forEach((san, index) => {
        const color = (index + (blackFirst ? 1 : 0)) % 2 === 0 ? 'white' : 'black';
        if (!row || color === 'white') {
          row = h('li', { class: 'move-row' }, h('span', { class: 'move-number' }, `${number}.`));
          rows.push(row);
          if (color === 'black') row.append(h('span', { class: 'move placeholder', 'aria-hidden': 'true' }, '…'));
          number += 1;
        }
        row.append(h('button', {
          type: 'button',
          class: 'move',
          dataset: { ply: String(index + 1) },
          'aria-label': t('{side, select, white {White} other {Black}}: {san}', { side: color, san }),
        }, san));
      });
      clear(this.movesEl, rows.length ? rows : h('li', { class: 'no-moves' }, t('No moves yet.')));
    }
    for (const button of this.movesEl.querySelectorAll('[data-ply]')) {
      const current = Number(button.dataset.ply) === ply;
      button.classList.toggle('current', current);
      if (current) button.setAttribute('aria-current', 'step');
      else button.removeAttribute('aria-current');
    }
    // Keep the current move visible by scrolling the list's own box only:
    // scrollIntoView would also scroll the page, which on a phone would drag
    // the board out of view on every move.
    const current = this.movesEl.querySelector('.current');
    const box = this.movesEl.parentElement;
    if (current) {
      const top = current.offsetTop;
      const bottom = top + current.offsetHeight;
      if (top < box.scrollTop) box.scrollTop = top;
      else if (bottom > box.scrollTop + box.clientHeight) box.scrollTop = bottom - box.clientHeight;
    } else if (ply === 0) {
      box.scrollTop = 0;
    }
  },

  // The navigation buttons, disabled at either end of the history.
  renderNav(ply, total) {
    this.navButtons.first.disabled = ply === 0;
    this.navButtons.prev.disabled = ply === 0;
    this.navButtons.next.disabled = ply === total;
    this.navButtons.last.disabled = ply === total;
  },
};

const ICONS = {
  first: 'M5 4h2v12H5z M16 4v12L8 10z',
  prev: 'M14 4v12L6 10z',
  next: 'M6 4v12l8-6z',
  last: 'M13 4h2v12h-2z M4 4v12l8-6z',
};

// Step buttons as drawn triangles: media-control glyphs are missing from many fonts.
const icon = (name) => pathIcon(ICONS[name]);

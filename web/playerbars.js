// The players' bars above and below the board (methods of GameView,
// gameview.js): name (a link for a rated player), rating and what the
// result did to it, "(you)", presence (online, offline, free seat,
// computer), the material one side is ahead by; each bar holds its clock
// (clocks.js).

import { h, clear } from './dom.js';
import { opposite, ratingText, sideLabel } from './format.js';
import { pieceElement } from './pieces.js';
import { changeText, playerLink, ratingChanges } from './player.js';
import { t } from './i18n.js';

export const playerBarMethods = {
  playerBar() {
    const name = h('span', { class: 'player-name' });
    const rating = h('span', { class: 'player-rating' });
    const tag = h('span', { class: 'player-tag' });
    const presence = h('span', { class: 'presence' });
    const clock = h('div', { class: 'clock', role: 'timer', 'aria-live': 'off' });
    const material = h('span', { class: 'material' });
    const el = h('div', { class: 'player-bar' }, h('div', { class: 'player' }, presence, name, rating, tag, material), clock);
    return { el, name, rating, tag, presence, clock, material, color: null };
  },

  renderBars(position) {
    const game = this.game;
    if (game.status === 'finished' && game.rated && !this.ratingChangesAsked) {
      // Once per page: what the result did to the players' ratings.
      this.ratingChangesAsked = true;
      ratingChanges(game).then((changes) => { this.ratingChanges = changes; this.render(); });
    }
    const advantage = materialAdvantage(position.board);
    const placement = { bottom: this.orientation, top: opposite(this.orientation) };
    for (const [where, color] of Object.entries(placement)) {
      const bar = this.bars[where];
      const side = game[color];
      bar.color = color;
      bar.el.dataset.color = color;
      bar.clock.dataset.clock = color;
      bar.clock.setAttribute('aria-label', t('{side, select, white {White} other {Black}} clock', { side: color }));
      bar.name.textContent = sideLabel(side, color, this.levels);
      const rated = side && side.kind === 'human' && side.name && typeof side.rating === 'number';
      if (rated) clear(bar.name, playerLink(side.name));
      bar.rating.textContent = rated ? ratingText(side.rating, side.provisional) : '';
      const change = this.ratingChanges && this.ratingChanges[color];
      if (rated && typeof change === 'number') bar.rating.textContent += ` ${changeText(change)}`;
      const mine = this.seat && this.seat.color === color;
      bar.tag.textContent = mine && !this.passPlay ? '(you)' : '';
      // An arena game: this side went berserk (half the clock, no increment).
      if ((game.berserk || []).includes(color)) bar.tag.append(h('span', { class: 'berserk-mark', title: t('Berserk: half the clock, no increment') }, ' ⚔ berserk'));
      let presence = '';
      let presenceLabel = '';
      if (side && side.kind === 'human') {
        // `taken` is the server's addition to the contract; without it a
        // nameless, unconnected seat of a waiting game is the free one.
        const free = game.status === 'waiting' && !mine
          && (side.taken === false || (side.taken === undefined && !side.name && !side.connected));
        presence = free ? 'free' : side.connected ? 'online' : 'offline';
        presenceLabel = free ? t('Seat free') : side.connected ? t('Connected') : t('Not connected');
        if (free) bar.name.textContent = t('Waiting for a player…');
      } else if (side && side.kind === 'ai') {
        presence = 'ai';
        presenceLabel = t('Computer');
      }
      bar.presence.className = `presence ${presence}`;
      bar.presence.setAttribute('aria-label', presenceLabel);
      bar.presence.setAttribute('role', 'img');
      bar.el.classList.toggle('to-move', game.status !== 'finished' && game.turn === color);
      const lead = advantage[color];
      const key = `${lead.pieces}${lead.points}`;
      if (bar.material.dataset.key !== key) {
        bar.material.dataset.key = key;
        clear(bar.material, lead.points > 0 || lead.pieces
          ? [...lead.pieces].map((role) => pieceElement((color === 'white' ? 'b' : 'w') + role, { automation: false })).concat(lead.points > 0 ? ` +${lead.points}` : '')
          : []);
        if (lead.points > 0) bar.material.setAttribute('aria-label', t('{side, select, white {White} other {Black}} is ahead by {points} in material', { side: color, points: lead.points }));
        else bar.material.removeAttribute('aria-label');
      }
    }
  },
};

const VALUES = { P: 1, N: 3, B: 3, R: 5, Q: 9 };

// Material in the shown position, per side: the roles one side has beyond
// the other's (shown as the opponent's pieces it has captured), and the
// difference in pawns (1/3/3/5/9).
function materialAdvantage(board) {
  const count = { w: {}, b: {} };
  for (const piece of board.values()) count[piece[0]][piece[1]] = (count[piece[0]][piece[1]] || 0) + 1;
  const result = {};
  for (const [color, me, them] of [['white', 'w', 'b'], ['black', 'b', 'w']]) {
    let pieces = '';
    let points = 0;
    for (const role of Object.keys(VALUES)) {
      const extra = (count[me][role] || 0) - (count[them][role] || 0);
      if (extra > 0) pieces += role.repeat(extra);
    }
    for (const role of Object.keys(VALUES)) points += VALUES[role] * ((count[me][role] || 0) - (count[them][role] || 0));
    result[color] = { pieces, points };
  }
  return result;
}

// The end of a game on its page (methods of GameView, gameview.js): the
// banner with the result, why, and "You won!" or "You lost."; and its
// Rematch button, an offer to the same opponent (offers.js) or, when
// there is nobody to ask, a new game with the same settings.

import { createGame } from './api.js';
import { h, clear } from './dom.js';
import { isStandardStart } from './chess.js';
import { opposite, resultText } from './format.js';
import { getSettings } from './storage.js';
import { guessClock } from './clocks.js';
import { t } from './i18n.js';

export const endingMethods = {
  renderBanner() {
    const game = this.game;
    if (game.status !== 'finished') {
      this.bannerEl.hidden = true;
      return;
    }
    if (!this.bannerEl.hidden && this.bannerEl.dataset.result === `${game.result}/${game.termination}`) return;
    this.bannerEl.hidden = false;
    this.bannerEl.dataset.result = `${game.result}/${game.termination}`;
    const { headline, reason } = resultText(game);
    let verdict = '';
    if (this.seat && !this.passPlay && (game.result === '1-0' || game.result === '0-1')) {
      const winner = game.result === '1-0' ? 'white' : 'black';
      verdict = winner === this.seat.color ? t('You won!') : t('You lost.');
    }
    const rematch = h('button', { type: 'button', class: 'primary', onclick: () => this.rematch(rematch) },
      this.seat ? t('Rematch') : t('Play these settings'));
    clear(this.bannerEl,
      h('h2', { class: 'banner-headline' }, headline),
      reason ? h('p', { class: 'banner-reason' }, reason) : null,
      verdict ? h('p', { class: 'banner-verdict' }, verdict) : null,
      h('p', { class: 'banner-result' }, game.result || ''),
      h('div', { class: 'banner-actions' }, rematch, h('a', { class: 'button', href: '/' }, t('New game'))));
  },

  async rematch(button) {
    // A player offers the rematch to the same opponent (offers.js); a game
    // nobody joined has no opponent, and pass and play has no one to ask:
    // those start a new game as before.
    if (!this.passPlay && this.offers.canOfferRematch(this.game)) {
      await this.offers.act('rematch');
      return;
    }
    const game = this.game;
    const settings = getSettings(this.gameId);
    const swap = (side) => (side.kind === 'ai' ? { kind: 'ai', level: side.level } : { kind: 'human' });
    const body = { white: swap(game.black), black: swap(game.white) };
    if (body.white.kind === 'human' && body.black.kind === 'human') {
      if (this.seat) body.as = opposite(this.seat.color);
      // A rematch is for the same friend: private, with a fresh invite link.
      body.visibility = 'private';
      // Pass and play continues at the same device.
      if (this.passPlay) body.as = 'both';
    }
    const clock = settings && 'clock' in settings ? settings.clock : guessClock(game);
    if (clock) body.clock = clock;
    if (!isStandardStart(game.initial_fen)) body.fen = game.initial_fen;
    button.disabled = true;
    try {
      const id = await createGame(body);
      window.location.assign(`/games/${encodeURIComponent(id)}`);
    } catch (error) {
      button.disabled = false;
      this.flash(t('Could not start a new game: {reason}', { reason: error.message }));
    }
  },
};

// Pass and play: one browser holds both seats of a human v human game
// (created with `"as": "both"`, see docs/API.md) and the two players take
// turns at the same device. The page acts for the side to move; the board
// turns to that side after every move, or stays put, as the user picks
// (remembered for every pass-and-play game of this browser).

import { h } from './dom.js';
import { getPreference, savePreference } from './storage.js';
import { t } from './i18n.js';

const TURN_KEY = 'passplay-turn';

export class PassAndPlay {
  constructor(seats, onChange) {
    this.seats = seats;
    this.onChange = onChange;
    this.turning = getPreference(TURN_KEY) !== false;
  }

  // The seat the page acts for: the side to move.
  seatFor(game) {
    return this.seats[game.turn] || this.seats.white;
  }

  other(seat) {
    return this.seats[seat.color === 'white' ? 'black' : 'white'];
  }

  // The board's side: the side to move while the game goes on, when the
  // user wants the board to turn; otherwise unchanged.
  orientation(game, current) {
    return this.turning && game.status !== 'finished' ? game.turn : current;
  }

  control() {
    const input = h('input', { type: 'checkbox', id: 'passplay-turn', checked: this.turning });
    input.addEventListener('change', () => {
      this.turning = input.checked;
      savePreference(TURN_KEY, this.turning);
      this.onChange();
    });
    return h('label', { class: 'checkbox passplay-turn' }, input, h('span', null, t('Turn the board to the side to move')));
  }
}

// The clocks of the game page (methods of GameView, gameview.js): each
// player bar's clock ticking locally from the last state and the time it
// arrived (the server decides flag falls), the low-time mark and its beep,
// the first-move countdown; and the time control read back from a game.

import { formatClock } from './format.js';
import { lowTimeThresholdMs } from './lowtime.js';
import { playSound } from './sound.js';
import { getSettings } from './storage.js';
import { t } from './i18n.js';

export const clockMethods = {
  renderClocks() {
    const game = this.game;
    if (!game) return;
    this.renderFirstMove();
    const low = this.lowTimeMs();
    for (const bar of Object.values(this.bars)) {
      if (!bar.color) continue;
      if (!game.clock) {
        bar.clock.hidden = true;
        continue;
      }
      bar.clock.hidden = false;
      let ms = game.clock[`${bar.color}_ms`];
      const running = game.status !== 'finished' && game.clock.running === bar.color;
      if (running) ms -= performance.now() - this.receivedAt;
      const text = formatClock(ms);
      if (bar.clock.textContent !== text) bar.clock.textContent = text;
      bar.clock.classList.toggle('running', running);
      bar.clock.classList.toggle('low', ms < low);
      // Once a turn, our own running clock crossing the line also beeps.
      if (running && ms < low && this.seat && this.seat.color === bar.color) {
        const turn = `${bar.color}:${game.moves.length}`;
        if (this.lowWarned !== turn) {
          this.lowWarned = turn;
          playSound('lowtime');
        }
      }
    }
  },

  // A side's clock stands until its first move, and a person who does not
  // make that move in time aborts the game (docs/API.md, "Clocks"): the
  // time left, counted down from the last state like the clocks.
  renderFirstMove() {
    const game = this.game;
    const waiting = game.status === 'active' && typeof game.first_move_ms === 'number';
    this.firstMoveEl.hidden = !waiting;
    if (!waiting) return;
    const seconds = Math.max(0, Math.ceil((game.first_move_ms - (performance.now() - this.receivedAt)) / 1000));
    const text = this.seat && this.seat.color === game.turn
      ? t('Make your first move within {seconds} s, or the game is aborted.', { seconds })
      : t('{side, select, white {White} other {Black}} has {seconds} s to make a first move, or the game is aborted.', { side: game.turn, seconds });
    if (this.firstMoveEl.textContent !== text) this.firstMoveEl.textContent = text;
  },

  // Below this a clock shows as low (see lowtime.js for the rule).
  lowTimeMs() {
    const settings = getSettings(this.gameId);
    const clock = settings && settings.clock ? settings.clock : guessClock(this.game);
    return lowTimeThresholdMs(clock ? clock.initial * 1000 : NaN);
  },
};

export function clockLabel(game, gameId) {
  const settings = getSettings(gameId);
  const clock = settings && settings.clock ? settings.clock : guessClock(game);
  return clock ? `${Math.round((clock.initial / 60) * 100) / 100}+${clock.increment}` : '';
}

// Without the creation settings (a friend who joined), the initial time is
// known exactly only if the server reports it; otherwise the larger remaining
// time rounded up to a whole minute is the best guess.
export function guessClock(game) {
  if (!game.clock) return null;
  const increment = Math.round((game.clock.increment_ms || 0) / 1000);
  if (typeof game.clock.initial_ms === 'number') return { initial: Math.round(game.clock.initial_ms / 1000), increment };
  const most = Math.max(game.clock.white_ms, game.clock.black_ms);
  return { initial: Math.max(60, Math.ceil(most / 60000) * 60), increment };
}

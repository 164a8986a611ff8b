// What the game page's panel says about the game (methods of GameView,
// gameview.js): the title and the line under it (clock, custom start,
// casual and why, who watches, your side), the status line (whose move,
// pending, premove, the position browsed), and the invite box of a game
// waiting for its second player.

import { h, clear } from './dom.js';
import { isStandardStart } from './chess.js';
import { matchLabel, moveLabel, opposite } from './format.js';
import { getInvite, getSettings } from './storage.js';
import { clockLabel, guessClock } from './clocks.js';
import { t } from './i18n.js';

export const statusMethods = {
  renderStatus(ply, total) {
    const game = this.game;
    let text;
    if (game.status === 'finished') {
      // The banner says who won and why; the status line does not repeat it.
      text = '';
    } else if (this.pending) {
      text = t('Sending your move…');
    } else if (this.passPlay && game.status === 'active') {
      text = t('{side, select, white {White} other {Black}} to play{check, select, yes {: in check!} other {.}}', { side: game.turn, check: game.check ? 'yes' : 'no' });
    } else if (this.premove) {
      text = t('Premove queued: it is sent when your turn comes (Escape or a click elsewhere cancels it).');
    } else if (game.status === 'waiting' && this.seat) {
      text = t('Waiting for your friend to join. Send them the link above.');
    } else if (game.status === 'waiting') {
      text = t('Waiting for a player to join.');
    } else if (this.seat) {
      const mine = game.turn === this.seat.color;
      const other = game[opposite(this.seat.color)];
      if (mine) text = game.check ? t('Your move: you are in check!') : t('Your move.');
      else text = other && other.kind === 'ai' ? t('Rookery is thinking…') : t('Waiting for your opponent to move.');
    } else {
      text = t('{side, select, white {White} other {Black}} to move{check, select, yes {, in check} other {}}.', { side: game.turn, check: game.check ? 'yes' : 'no' });
    }
    if (ply !== total) {
      const over = game.status === 'finished' ? 'yes' : 'no';
      text = ply === 0
        ? t('Viewing the start position.{over, select, yes {} other { Press “Last move” to return to the game.}}', { over })
        : t('Viewing the position after {move}.{over, select, yes {} other { Press “Last move” to return to the game.}}', { move: moveLabel(game.initial_fen, ply, game.san[ply - 1]), over });
    }
    this.statusEl.textContent = text;
  },

  renderInvite() {
    const game = this.game;
    const show = game.status === 'waiting' && !!this.seat;
    this.inviteEl.hidden = !show;
    if (!show || this.inviteEl.childElementCount) return;
    // A private game's link carries its secret in the fragment; an open
    // seek's link is the game's address.
    const invite = getInvite(this.gameId);
    if (!invite && !game.joinable && !this.seat.token) {
      // A private game's secret stays in the browser that made it: a seat
      // reached through the account elsewhere has no link to hand out.
      clear(this.inviteEl, h('p', null, t('The invite link for this private game is on the device where you created it.')));
      return;
    }
    const link = `${window.location.origin}/games/${encodeURIComponent(this.gameId)}${invite ? `#invite=${invite}` : ''}`;
    const input = h('input', { id: 'invite-link', class: 'invite-link', type: 'text', readonly: true, value: link });
    const copy = h('button', { type: 'button' }, t('Copy link'));
    copy.addEventListener('click', async () => {
      input.select();
      try {
        await navigator.clipboard.writeText(link);
        copy.textContent = t('Copied');
      } catch {
        copy.textContent = t('Select and copy');
      }
    });
    const label = game.joinable
      ? t('Open seek: anyone can join from the lobby, or send this link')
      : t('Invite a friend: send this link to them only');
    clear(this.inviteEl,
      h('label', { for: 'invite-link' }, label),
      h('div', { class: 'invite-row' }, input, copy));
  },

  // The title, the tab's title and the line under it.
  renderHead() {
    const game = this.game;
    const levels = this.levels;
    this.title.textContent = matchLabel(game, levels);
    const yourMove = this.seat && !this.passPlay && game.status === 'active' && game.turn === this.seat.color;
    document.title = yourMove ? t('● Your move · {title} · Rookery', { title: matchLabel(game, levels) }) : t('{title} · Rookery', { title: matchLabel(game, levels) });
    const meta = [];
    if (game.clock) meta.push(t('Clock {clock}', { clock: clockLabel(game, this.gameId) }));
    else meta.push(t('No clock'));
    if (game.variant === 'chess960') meta.push(t('Chess960'));
    else if (!isStandardStart(game.initial_fen)) meta.push(t('Custom start'));
    if (game.rated === false) meta.push(casualText(game, this.gameId));
    else if (game.rated) meta.push(t('Rated'));
    if (typeof game.spectators === 'number' && game.status !== 'finished') meta.push(t('{count, plural, one {# watching} other {# watching}}', { count: game.spectators }));
    if (this.passPlay) meta.push(t('Pass and play'));
    else if (this.seat) meta.push(t('You play {side, select, white {white} other {black}}', { side: this.seat.color }));
    else meta.push(t('Spectating'));
    this.meta.textContent = meta.join(' · ');
  },
};

// "Casual", and why when the rest of the header does not say it (a custom
// start does): the rules are docs/API.md's "Rated and casual games".
function casualText(game, gameId) {
  if (!isStandardStart(game.initial_fen)) return t('Casual');
  const settings = getSettings(gameId);
  const clock = settings && settings.clock ? settings.clock : guessClock(game);
  if (clock && clock.initial < 60) return t('Casual: under a minute on the clock');
  const computer = game.white.kind === 'ai' || game.black.kind === 'ai';
  if (computer && (game.takebacks || 0) > 0) return t('Casual: a move was taken back against the computer');
  return t('Casual: no rating changes');
}

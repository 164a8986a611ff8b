// The player's input on the game page (methods of GameView, gameview.js):
// a move from the board (sent over the socket, else over HTTP, and shown
// as pending until the server's state comes back), a premove queued in the
// opponent's turn and played or dropped when ours comes, resign with its
// confirmation, draw and cancel, flipping the board, the keyboard.

import { api } from './api.js';
import { setPlaying } from './challenges.js';
import { opposite } from './format.js';
import { saveOrientation } from './storage.js';
import { premoveToPlay } from './premove.js';
import { t } from './i18n.js';

const PENDING_TIMEOUT_MS = 8000;

export const controlMethods = {
  canMove() {
    const game = this.game;
    // Moves count only once both seats are filled (the server says
    // not_your_turn while waiting), so the board stays still until then.
    return !!this.seat && game.status === 'active' && game.turn === this.seat.color
      && this.viewPly === null && !this.pending;
  },

  async sendMove(uci) {
    if (this.canPremove()) {
      this.premove = uci;
      this.render();
      return;
    }
    if (!this.canMove() || !this.game.legal_moves.includes(uci)) return;
    this.flash('');
    this.pending = uci;
    this.pendingTimer = setTimeout(() => {
      this.pending = null;
      this.render();
    }, PENDING_TIMEOUT_MS);
    this.render();
    if (this.sendOnSocket({ type: 'move', uci })) return;
    await this.post('move', { uci });
  },

  async sendAction(type) {
    if (!this.seat || this.game.status === 'finished') return;
    this.flash('');
    if (this.sendOnSocket({ type })) return;
    await this.post(type);
  },

  // HTTP fallback while the socket is down.
  async post(action, body) {
    try {
      const game = await api('POST', `/api/games/${encodeURIComponent(this.gameId)}/${action}`, {
        body, token: this.seat.token,
      });
      if (game && game.moves.length >= this.game.moves.length) this.update(game);
    } catch (error) {
      this.onServerError({ code: error.code, message: error.message });
    }
  },

  canPremove() {
    const game = this.game;
    return !!this.seat && !this.passPlay && game.status === 'active' && game.turn !== this.seat.color
      && this.viewPly === null;
  },

  // Our turn came with a premove queued: send it if it is legal now,
  // otherwise drop it and say so.
  playPremove() {
    const queued = this.premove;
    if (!queued || !this.seat) return;
    const game = this.game;
    if (game.status === 'finished') {
      this.cancelPremove();
      return;
    }
    if (game.turn !== this.seat.color || game.status !== 'active') return;
    this.premove = null;
    const uci = premoveToPlay(queued, game.legal_moves);
    if (uci) this.sendMove(uci);
    else {
      this.flash(t('Your premove was not legal after your opponent’s move, so it was dropped.'));
      this.render();
    }
  },

  cancelPremove() {
    if (!this.premove) return;
    this.premove = null;
    this.render();
  },

  resign() {
    if (this.resignArmed) {
      clearTimeout(this.resignArmed);
      this.resignArmed = null;
      this.sendAction('resign');
      this.render();
      return;
    }
    this.resignArmed = setTimeout(() => {
      this.resignArmed = null;
      this.render();
    }, 4000);
    this.render();
  },

  flip() {
    this.orientation = opposite(this.orientation);
    saveOrientation(this.gameId, this.orientation);
    this.render();
  },

  onKey(event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    // The board keeps the arrows it uses to move the keyboard focus (it
    // stops them); after a click on it they arrive here and step the moves.
    if (target instanceof Element && target.closest('input, textarea, select, [role="dialog"]')) return;
    const keys = {
      ArrowLeft: () => this.step(-1),
      ArrowRight: () => this.step(1),
      Home: () => this.goTo(0),
      End: () => this.goTo(Infinity),
      f: () => this.flip(),
      Escape: () => this.cancelPremove(),
    };
    const action = keys[event.key];
    if (!action || !this.game) return;
    event.preventDefault();
    action();
  },

  // Resign (with its confirmation), offer a draw, cancel a waiting game:
  // each shown only when it applies.
  renderControls() {
    const game = this.game;
    const playing = !!this.seat && game.status !== 'finished';
    // A game start elsewhere does not take this tab away from a game.
    setPlaying(playing);
    this.resignButton.hidden = !playing || game.status !== 'active';
    this.resignButton.textContent = this.resignArmed ? t('Confirm resignation') : t('Resign');
    // A standing offer is answered in the offers box.
    this.drawButton.hidden = !playing || game.status !== 'active' || this.opponentIsAi() || !!game.draw_offer;
    this.cancelButton.hidden = !playing || game.status !== 'waiting';
  },
};

// Offers between the players of a game page: draw, takeback and rematch
// offers with their answers (accept, decline, withdraw), a takeback
// request, and the abort allowed before each side has moved. Everything
// shown comes from the last GameState; a click only becomes a request.
//
// Answers go over the game's socket when it is open, else over HTTP. A
// rematch always goes over HTTP: its answer carries this player's seat in
// the new game once both agreed (asked again, it gives the same seat).
// The opponent learns of it on their socket, which brings their own seat.

import { api } from './api.js';
import { h, clear } from './dom.js';
import { opposite } from './format.js';
import { getSettings, saveSeat, saveSettings } from './storage.js';
import { t } from './i18n.js';

// The HTTP path of each action (`draw_decline` is POST .../draw/decline).
const PATHS = {
  draw: 'draw',
  draw_decline: 'draw/decline',
  draw_withdraw: 'draw/withdraw',
  takeback: 'takeback',
  takeback_decline: 'takeback/decline',
  takeback_withdraw: 'takeback/withdraw',
  rematch: 'rematch',
  rematch_decline: 'rematch/decline',
  rematch_withdraw: 'rematch/withdraw',
  abort: 'abort',
};

export class OfferControls {
  // `view` is the game page: its seat, socket, last state and update().
  constructor(view) {
    this.view = view;
    this.message = h('p', { class: 'offer-message' });
    this.answers = h('div', { class: 'offer-answers' });
    this.box = h('div', { class: 'offer', role: 'group', 'aria-label': t('Offer'), hidden: true }, this.message, this.answers);
    this.takebackButton = h('button', { type: 'button', onclick: () => this.askTakeback() }, t('Take back move'));
    this.abortButton = h('button', { type: 'button', onclick: () => this.act('abort') }, t('Abort game'));
    this.takebacksEl = h('p', { class: 'takebacks muted', hidden: true });
    // The takeback just granted: { plies } until the next move.
    this.takenBack = null;
    // Against the computer a takeback is granted at once and makes a rated
    // game casual: the page asks first, and says so.
    this.confirmYes = h('button', { type: 'button', class: 'primary', onclick: () => this.confirmTakeback(true) }, t('Take back and play casual'));
    this.confirmBox = h('div', { class: 'takeback-confirm', role: 'group', 'aria-labelledby': 'takeback-confirm-text', hidden: true },
      h('p', { class: 'offer-message', id: 'takeback-confirm-text' },
        t('Taking back a move against the computer makes this game casual: its result will not count on the scoreboard.')),
      h('div', { class: 'offer-answers' },
        this.confirmYes,
        h('button', { type: 'button', onclick: () => this.confirmTakeback(false) }, t('Keep playing rated'))));
    this.confirming = false;
    // What became of this player's last offer (the state's `offer_answer`).
    this.answerEl = h('p', { class: 'offer-answer', hidden: true });
    this.notice = null;
    // What waits for an answer (an offer, the takeback's confirmation) is
    // the sheet the page keeps in view (on a phone, docked at the bottom of
    // the screen); the rest stays in the panel. Both regions are announced
    // when an offer arrives or is answered.
    this.sheet = h('div', { class: 'offers offer-sheet', 'aria-live': 'polite' }, this.box, this.confirmBox);
    this.el = h('div', { class: 'offers', 'aria-live': 'polite' }, this.answerEl, this.takebacksEl,
      h('div', { class: 'actions offer-actions' }, this.takebackButton, this.abortButton));
    this.shown = '';
  }

  opponent(game) {
    const seat = this.view.seat;
    return seat ? game[opposite(seat.color)] : null;
  }

  // A takeback the computer would grant, in a game that still counts.
  takebackMakesCasual(game) {
    const other = this.opponent(game);
    return !!other && other.kind === 'ai' && game.rated !== false;
  }

  askTakeback() {
    if (!this.takebackMakesCasual(this.view.game)) {
      this.act('takeback');
      return;
    }
    this.confirming = true;
    this.render(this.view.game);
    this.confirmYes.focus();
  }

  confirmTakeback(yes) {
    this.confirming = false;
    this.render(this.view.game);
    if (yes) this.act('takeback');
    else this.takebackButton.focus();
  }

  // Called with each new state before it is drawn. The one state that ended
  // an offer carries `offer_answer`: the offer's maker is told what became
  // of it (and the opponent, of an offer withdrawn), until the next move or
  // for a few seconds. The page's first state is old news.
  onState(previous, game) {
    if (this.notice && game.moves.length !== this.notice.plies) this.dismissNotice();
    if (this.takenBack && (game.moves.length !== this.takenBack.plies || game.status !== 'active')) this.dismissTakeback();
    if (previous && game.status === 'active' && (game.takebacks || 0) > (previous.takebacks || 0)) {
      this.takenBack = { plies: game.moves.length };
      clearTimeout(this.takebackTimer);
      this.takebackTimer = setTimeout(() => this.dismissTakeback(), NOTICE_MS);
    }
    const seat = this.view.seat;
    if (!previous || !game.offer_answer || !seat || this.view.passPlay) return;
    const text = answerText(game.offer_answer, seat.color, game);
    if (!text) return;
    this.notice = { plies: game.moves.length };
    this.answerEl.textContent = text;
    this.answerEl.hidden = false;
    clearTimeout(this.noticeTimer);
    this.noticeTimer = setTimeout(() => this.dismissNotice(), NOTICE_MS);
  }

  dismissTakeback() {
    clearTimeout(this.takebackTimer);
    this.takenBack = null;
    if (this.view.game) this.render(this.view.game);
  }

  dismissNotice() {
    clearTimeout(this.noticeTimer);
    this.notice = null;
    this.answerEl.hidden = true;
    this.answerEl.textContent = '';
  }

  // Whether a finished game's page should keep its socket: a seat holder
  // against a person hears of rematch offers and of the agreed rematch.
  wantsSocket(game) {
    const seat = this.view.seat;
    if (!seat) return false;
    const other = game[opposite(seat.color)];
    return !!other && other.kind === 'human';
  }

  // Whether this page's player can offer a rematch: the other seat is the
  // computer or was taken.
  canOfferRematch(game) {
    const seat = this.view.seat;
    if (!seat) return false;
    const other = game[opposite(seat.color)];
    return !!other && (other.kind === 'ai' || other.taken !== false);
  }

  async act(type) {
    const view = this.view;
    if (!view.seat || !PATHS[type]) return;
    view.flash('');
    // A rematch goes over HTTP for its answer's seat token; a seat held
    // through the account has no token to send, and asks on the socket
    // (the new seat is the account's, so the cookie opens it).
    if ((type !== 'rematch' || !view.seat.token) && view.socket && view.socket.send({ type })) return;
    try {
      const answer = await api('POST', `/api/games/${encodeURIComponent(view.gameId)}/${PATHS[type]}`, { token: view.seat.token });
      if (type === 'rematch') {
        view.update(answer.game);
        if (answer.rematch) this.goToRematch(answer.rematch.id, answer.rematch.seat);
      } else {
        view.update(answer);
      }
    } catch (error) {
      view.onServerError({ code: error.code, message: error.message });
    }
  }

  // The socket's `rematch` message: our seat in the agreed new game.
  // A seat held through the account keeps no token: the new game's seat is
  // the account's too.
  onRematch(message) {
    if (!this.view.seat || typeof message.game !== 'string' || typeof message.token !== 'string') return;
    this.goToRematch(message.game, this.view.seat.token ? { color: message.color, token: message.token } : null);
  }

  goToRematch(id, seat) {
    if (this.leaving) return;
    this.leaving = true;
    if (seat) saveSeat(id, seat);
    // Same clock: keep the settings the label is read from.
    const settings = getSettings(this.view.gameId);
    if (settings) saveSettings(id, settings);
    window.location.assign(`/games/${encodeURIComponent(id)}`);
  }

  render(game) {
    const seat = this.view.seat;
    const mine = seat ? seat.color : null;
    const active = game.status === 'active';
    const finished = game.status === 'finished';
    const offer = this.currentOffer(game);

    let text = '';
    let buttons = [];
    if (offer) {
      const { kind, by } = offer;
      if (!mine) {
        text = {
          draw: t('{side, select, white {White} other {Black}} offers a draw.', { side: by }),
          takeback: t('{side, select, white {White} other {Black}} asks to take back their last move.', { side: by }),
          rematch: t('{side, select, white {White} other {Black}} offers a rematch.', { side: by }),
        }[kind];
      } else if (by === mine) {
        text = { draw: t('You offered a draw.'), takeback: t('You asked to take back your last move.'), rematch: t('You offered a rematch. Waiting for your opponent…') }[kind];
        const withdraw = { draw: t('Withdraw draw offer'), takeback: t('Withdraw takeback offer'), rematch: t('Withdraw rematch offer') }[kind];
        buttons = [this.button(withdraw, `${kind}_withdraw`)];
      } else {
        text = {
          draw: t('Your opponent offers a draw. Accept it, or play on: your next move declines it.'),
          takeback: t('Your opponent asks to take back their last move.'),
          rematch: t('Your opponent offers a rematch.'),
        }[kind];
        const accept = { draw: t('Accept draw'), takeback: t('Accept takeback'), rematch: t('Accept rematch') }[kind];
        const decline = { draw: t('Decline draw'), takeback: t('Decline takeback'), rematch: t('Decline rematch') }[kind];
        buttons = [
          this.button(accept, kind, 'primary'),
          this.button(decline, `${kind}_decline`),
        ];
      }
    } else if (finished && game.rematch) {
      text = t('The rematch was agreed.');
      if (mine) buttons = [this.button(t('Go to the rematch'), 'rematch', 'primary')];
    }
    const key = `${text}|${buttons.map((b) => b.textContent).join('|')}`;
    if (key !== this.shown) {
      this.shown = key;
      this.box.hidden = !text;
      this.message.textContent = text;
      clear(this.answers, buttons);
    }

    // A takeback is news until the next move (or a few seconds): the
    // header says for good what it changed (a game turned casual).
    this.takebacksEl.hidden = !this.takenBack;
    this.takebacksEl.textContent = this.takenBack ? t('One move was taken back.') : '';
    this.takebackButton.hidden = !mine || !active || !!game.takeback_offer || !hasMoveToTakeBack(game, mine);
    const other = this.opponent(game);
    this.takebackButton.title = !other ? ''
      : other.kind !== 'ai' ? t('Ask your opponent to let you take back your last move.')
        : this.takebackMakesCasual(game)
          ? t('The computer lets you take back your last move at once, and the game becomes casual: its result will not count on the scoreboard.')
          : t('The computer lets you take back your last move at once.');
    this.confirming = this.confirming && !this.takebackButton.hidden && this.takebackMakesCasual(game);
    this.confirmBox.hidden = !this.confirming;
    this.abortButton.hidden = !mine || !active || game.moves.length >= 2;
  }

  currentOffer(game) {
    if (game.status === 'active') {
      if (game.takeback_offer) return { kind: 'takeback', by: game.takeback_offer };
      if (game.draw_offer) return { kind: 'draw', by: game.draw_offer };
    } else if (game.status === 'finished' && game.rematch_offer) {
      return { kind: 'rematch', by: game.rematch_offer };
    }
    return null;
  }

  button(label, type, className) {
    return h('button', { type: 'button', class: className, onclick: () => this.act(type) }, label);
  }
}

const NOTICE_MS = 6000;
const OFFERS = ['draw', 'takeback', 'rematch'];

// What `mine` (a seat's colour) is told of an offer's answer: its maker
// hears every answer, the opponent only of an offer withdrawn (the other
// answers were their own doing).
export function answerText({ offer, by, answer }, mine, game) {
  if (!OFFERS.includes(offer)) return '';
  const args = { offer, over: game.status === 'finished' ? 'yes' : 'no' };
  if (by !== mine) {
    return answer === 'withdrawn'
      ? t('Your opponent withdrew their {offer, select, draw {draw offer} takeback {takeback request} other {rematch offer}}.', args)
      : '';
  }
  const texts = {
    accepted: () => t('Your {offer, select, draw {draw offer} takeback {takeback request} other {rematch offer}} was accepted.', args),
    declined: () => t('Your {offer, select, draw {draw offer} takeback {takeback request} other {rematch offer}} was declined.', args),
    withdrawn: () => t('You withdrew your {offer, select, draw {draw offer} takeback {takeback request} other {rematch offer}}.', args),
    expired: () => t('Your {offer, select, draw {draw offer} takeback {takeback request} other {rematch offer}} expired: {over, select, yes {the game ended} other {a move was made}}.', args),
  };
  return texts[answer] ? texts[answer]() : '';
}

// Whether `color` has a move of its own to take back: its last move, after
// which the opponent may have replied.
function hasMoveToTakeBack(game, color) {
  return game.moves.length >= (game.turn === color ? 2 : 1);
}

// The game page's view (see game.js for the page itself): the last
// GameState, the seat, the history being browsed, a move on its way or a
// premove queued; the page's layout, and update() and render(), which
// redraw everything from the state. Other parts of the page are methods of
// GameView too, written by concern in their own modules (as the server's
// live game is), and put on its prototype at the end of this file:
// connection.js (the game's sockets), controls.js (moves, premoves and the
// buttons), clocks.js, playerbars.js, movelist.js, status.js (title,
// status line, invite) and ending.js (banner and rematch). Offers, the
// analysis and the chat are components of their own (offers.js,
// analysis.js, chat.js) that take the view.

import { AnalysisPanel } from './analysis.js';
import { GameChat, chatOpponent } from './chat.js';
import { h, clear } from './dom.js';
import { BoardView, destsOf } from './board.js';
import { kingSquare, parseFen, positionsOf, splitUci } from './chess.js';
import { opposite } from './format.js';
import { OfferControls } from './offers.js';
import { PassAndPlay } from './passplay.js';
import { premoveDests } from './premove.js';
import { muteButton, playSound, soundFor } from './sound.js';
import { clockMethods } from './clocks.js';
import { connectionMethods } from './connection.js';
import { controlMethods } from './controls.js';
import { endingMethods } from './ending.js';
import { moveListMethods } from './movelist.js';
import { playerBarMethods } from './playerbars.js';
import { statusMethods } from './status.js';
import { t } from './i18n.js';

export class GameView {
  constructor(root, gameId, levels, seat, bothSeats = null, me = null) {
    this.gameId = gameId;
    // The players' chat, once this page is known to be one of two named
    // players (syncChat).
    this.me = me;
    this.chat = null;
    // The room the socket told of, and its lines (kept for a chat box
    // drawn later, when the opponent arrives).
    this.chatRoom = null;
    this.chatLines = [];
    // On a phone the chat opens from a button docked at the bottom of the
    // screen (with the count of lines not yet seen); on a wide screen it is
    // always open at the bottom of the panel.
    this.chatToggle = h('button', {
      type: 'button', class: 'chat-toggle', 'aria-expanded': 'false', 'aria-controls': 'chat-holder', onclick: () => this.toggleChat(),
    }, t('Chat'));
    this.chatHolder = h('div', { class: 'chat-holder', id: 'chat-holder' });
    this.chatSlot = h('div', { class: 'chat-slot', hidden: true }, this.chatToggle, this.chatHolder);
    this.chatUnseen = 0;
    this.passPlay = bothSeats ? new PassAndPlay(bothSeats, () => this.update(this.game)) : null;
    this.premove = null;
    this.lowWarned = null;
    this.levels = levels;
    this.seat = seat;
    this.game = null;
    this.receivedAt = 0;
    this.viewPly = null;
    this.pending = null;
    this.pendingTimer = null;
    this.positionsCache = null;
    this.socket = null;
    this.connection = 'connecting';
    // Pass and play without turning keeps white at the bottom.
    this.orientation = seat && seat.color === 'black' && !bothSeats ? 'black' : 'white';
    this.renderedMoves = -1;
    this.resignArmed = null;

    this.board = new BoardView({ onMove: (uci) => this.sendMove(uci), onCancel: () => this.cancelPremove(), label: t('Chess board') });
    this.bars = { top: this.playerBar(), bottom: this.playerBar() };
    this.title = h('h1', { class: 'game-title' });
    this.meta = h('p', { class: 'game-meta' });
    this.statusEl = h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
    this.connectionEl = h('span', { class: 'connection' });
    this.firstMoveEl = h('p', { class: 'first-move', hidden: true });
    this.flashEl = h('p', { class: 'flash', role: 'alert', hidden: true });
    this.flashedAt = null;
    this.inviteEl = h('div', { class: 'invite', hidden: true });
    this.bannerEl = h('div', { class: 'banner', hidden: true, 'aria-live': 'polite' });
    // Draw, takeback and rematch offers, takeback and abort (offers.js).
    this.offers = new OfferControls(this);
    this.movesEl = h('ol', { class: 'moves', 'aria-label': t('Moves') });
    this.navButtons = this.makeNavButtons();
    this.resignButton = h('button', { type: 'button', class: 'danger', onclick: () => this.resign() }, t('Resign'));
    this.drawButton = h('button', { type: 'button', onclick: () => this.sendAction('draw') }, t('Offer draw'));
    // Resigning before the opponent arrives aborts the game (no result).
    this.cancelButton = h('button', { type: 'button', onclick: () => this.sendAction('resign') }, t('Cancel game'));
    this.flipButton = h('button', { type: 'button', 'aria-label': t('Flip board'), onclick: () => this.flip() }, t('Flip board'));
    this.pgnLink = h('a', {
      class: 'button',
      href: `/api/games/${encodeURIComponent(gameId)}/pgn`,
      download: `rookery-${gameId}.pgn`,
    }, t('Download PGN'));

    this.analysis = new AnalysisPanel(this);
    clear(root, h('section', { class: 'game-page' },
      h('div', { class: 'board-area' }, this.bars.top.el, h('div', { class: 'board-holder' }, this.board.el), this.bars.bottom.el),
      h('aside', { class: 'panel' },
        h('div', { class: 'game-head' }, this.title, this.meta),
        this.inviteEl,
        this.flashEl,
        h('div', { class: 'status-line' }, this.statusEl, this.connectionEl),
        this.firstMoveEl,
        this.bannerEl,
        // What asks for an answer, and the chat: in the panel's flow on a
        // wide screen, docked at the bottom of a phone's screen.
        h('div', { class: 'dock' }, this.offers.sheet, this.chatSlot),
        this.offers.el,
        // After the game, the analysis comes first: it is what is wanted.
        this.analysis.el,
        h('div', { class: 'moves-box' }, this.movesEl),
        h('nav', { class: 'replay-nav', 'aria-label': t('Move navigation') }, Object.values(this.navButtons)),
        h('div', { class: 'actions game-actions' }, this.resignButton, this.drawButton, this.cancelButton, this.flipButton, this.pgnLink,
          this.analysis.copyFen, this.analysis.copyPgn, muteButton(h)),
        this.passPlay ? this.passPlay.control() : null)));

    this.movesEl.addEventListener('click', (event) => {
      const button = event.target instanceof Element ? event.target.closest('[data-ply]') : null;
      if (button) this.goTo(Number(button.dataset.ply));
    });
    document.addEventListener('keydown', (event) => this.onKey(event));
    // A click anywhere off the board drops a queued premove.
    document.addEventListener('click', (event) => {
      if (!(event.target instanceof Node) || !this.board.el.contains(event.target)) this.cancelPremove();
    });
    this.clockTimer = setInterval(() => this.renderClocks(), 100);
  }

  update(game) {
    const previous = this.game;
    this.game = game;
    this.receivedAt = performance.now();
    if (!previous || previous.moves.length !== game.moves.length || game.status === 'finished') this.clearPending();
    if (this.viewPly !== null && this.viewPly >= game.moves.length) this.viewPly = null;
    if (this.passPlay) {
      this.seat = this.passPlay.seatFor(game);
      this.orientation = this.passPlay.orientation(game, this.orientation);
    }
    if (game.status === 'finished' && this.socket && !this.offers.wantsSocket(game)) {
      this.socket.stop();
      this.socket = null;
      this.connection = 'finished';
    }
    if (game.status === 'finished' && this.partnerSocket) {
      this.partnerSocket.stop();
      this.partnerSocket = null;
    }
    if (this.flashedAt && this.flashedAt !== flashKey(game)) this.flash('');
    this.offers.onState(previous, game);
    const sound = soundFor(previous, game, previous && pieceCount(game.fen) < pieceCount(previous.fen));
    if (sound) playSound(sound);
    this.render();
    this.playPremove();
    // A part of the page that follows the state (the arena's berserk).
    if (this.afterUpdate) this.afterUpdate(game);
  }

  // A message about what just happened (a join, a refusal): it holds until
  // the game moves on (a move, a takeback, its start or its end), so it
  // never lingers on a position or a result it was not about.
  flash(text) {
    this.flashEl.textContent = text || '';
    this.flashEl.hidden = !text;
    this.flashedAt = text && this.game ? flashKey(this.game) : null;
  }

  clearPending() {
    this.pending = null;
    clearTimeout(this.pendingTimer);
  }

  positions() {
    const game = this.game;
    if (!this.positionsCache || this.positionsCache.length !== game.moves.length + 1) {
      this.positionsCache = positionsOf(game.initial_fen, game.moves);
    }
    return this.positionsCache;
  }

  render() {
    const game = this.game;
    const total = game.moves.length;
    const ply = this.viewPly === null ? total : this.viewPly;

    this.renderHead();

    // Board.
    let position;
    let check = null;
    if (ply === total) {
      position = parseFen(game.fen);
      if (game.check) check = kingSquare(position.board, game.turn);
    } else {
      position = this.positions()[ply];
      const san = game.san[ply - 1] || '';
      if (/[+#]$/.test(san)) check = kingSquare(position.board, position.turn);
    }
    const last = ply > 0 ? splitUci(game.moves[ply - 1]) : null;
    let dests = new Map();
    if (this.canMove()) dests = destsOf(game.legal_moves);
    else if (this.canPremove()) dests = premoveDests(position.board, this.seat.color, game.variant === 'chess960');
    const premove = this.premove ? splitUci(this.premove) : null;
    this.board.set({
      position,
      dests,
      premove: premove ? [premove.from, premove.to] : null,
      lastMove: last ? [last.from, last.to] : null,
      check,
      orientation: this.orientation,
    });
    this.board.el.classList.toggle('history', ply !== total);
    this.board.el.classList.toggle('pending', !!this.pending);

    this.renderBars(position);
    this.renderClocks();
    this.renderStatus(ply, total);
    this.renderInvite();
    this.renderBanner();
    this.offers.render(game);
    this.renderMoves(ply);
    this.renderNav(ply, total);
    this.renderControls();
    this.renderConnection();
    this.analysis.render(ply);
    this.syncChat();
  }

  // The chat box of the room the socket serves this page (chat.js): the
  // players' room once the page holds a seat of a named player facing
  // another named player (a seat the socket confirms later, an opponent
  // who joins later); the spectators' room for a spectator. None for pass
  // and play.
  syncChat() {
    // Chat rides the game's socket: a page without one (a finished game's)
    // has no chat to show.
    if (this.passPlay || !this.game || !this.socket) return;
    const room = this.seat ? 'player' : 'spectator';
    if (this.chatRoom !== room) {
      // The socket sends a room's lines only when it has some.
      this.chatRoom = room;
      this.chatLines = [];
    }
    if (this.chat && this.chat.room === room) return;
    let opponent = null;
    if (room === 'player') {
      opponent = chatOpponent(this.game, this.seat, this.me);
      if (!opponent) return;
    }
    if (this.chat) this.chat.el.remove();
    this.chat = new GameChat({
      room,
      me: this.me,
      opponent,
      send: (text) => !!this.socket && this.socket.send({ type: 'chat', text }),
      // Players are known by their seat; a spectator by the session cookie.
      canWrite: room === 'player' || (!!this.me && this.me.token === null),
    });
    this.chat.show(this.chatLines);
    this.chatHolder.append(this.chat.el);
    this.chatSlot.hidden = false;
  }

  toggleChat(open = !this.chatSlot.classList.contains('open')) {
    this.chatSlot.classList.toggle('open', open);
    this.chatToggle.setAttribute('aria-expanded', String(open));
    if (open) this.chatUnseen = 0;
    this.renderChatToggle();
    if (open && this.chat) this.chat.input.focus({ preventScroll: true });
  }

  renderChatToggle() {
    this.chatToggle.textContent = this.chatUnseen > 0 ? t('Chat ({count, plural, one {# new} other {# new}})', { count: this.chatUnseen }) : t('Chat');
  }

  onChatHistory(message) {
    if (message.room !== 'player' && message.room !== 'spectator') return;
    this.chatRoom = message.room;
    this.chatLines = Array.isArray(message.lines) ? message.lines.slice() : [];
    if (this.chat && this.chat.room === this.chatRoom) this.chat.show(this.chatLines);
    else this.syncChat();
  }

  onChatLine(message) {
    if (message.room !== (this.seat ? 'player' : 'spectator')) return;
    if (this.chatRoom !== message.room) {
      this.chatRoom = message.room;
      this.chatLines = [];
    }
    const line = { user: message.user, text: message.text };
    this.chatLines.push(line);
    if (this.chat && this.chat.room === message.room) this.chat.add(line);
    if (!this.chatSlot.classList.contains('open') && !(this.me && String(line.user).toLowerCase() === this.me.name.toLowerCase())) {
      this.chatUnseen += 1;
      this.renderChatToggle();
    }
  }

  opponentIsAi() {
    if (!this.seat) return false;
    const other = this.game[opposite(this.seat.color)];
    return !!other && other.kind === 'ai';
  }
}

Object.assign(GameView.prototype, connectionMethods, controlMethods, clockMethods, playerBarMethods,
  moveListMethods, statusMethods, endingMethods);

// What a flash is about: the game's moves and status.
function flashKey(game) {
  return `${game.status}/${game.moves.length}/${game.takebacks || 0}`;
}

// Pieces on the board of a FEN: fewer after a move means a capture.
function pieceCount(fen) {
  return (String(fen).split(' ')[0].match(/[a-z]/gi) || []).length;
}

// The game page's connections (methods of GameView, gameview.js): the
// game's WebSocket (socket.js) and what its messages do to the view, the
// pass-and-play partner's second socket, sending an action on the socket
// of the seat that acts, the check that a seat refused by the server is
// dead, the server's refusals in words, and the "Live" indicator.

import { GameSocket } from './socket.js';
import { getOrientation, saveBothSeats, saveSeat } from './storage.js';
import { t } from './i18n.js';

export const connectionMethods = {
  connect() {
    if (this.game && this.game.status === 'finished' && !this.offers.wantsSocket(this.game)) {
      this.connection = 'finished';
      this.renderConnection();
      return;
    }
    this.failures = 0;
    this.socket = new GameSocket(this.gameId, this.seat && this.seat.token, {
      onState: (game) => {
        this.failures = 0;
        this.update(game);
      },
      // Who is connected changed, and nothing else: patch the last state.
      onPresence: (presence) => {
        if (!this.game) return;
        for (const color of ['white', 'black']) {
          const seat = this.game[color];
          if (seat && seat.kind === 'human') seat.connected = presence[color] === true;
        }
        this.game.spectators = presence.spectators;
        this.render();
      },
      onError: (message) => this.onServerError(message),
      onRematch: (message) => this.offers.onRematch(message),
      onAuthenticated: (color) => this.takeAccountSeat(color),
      // Chat rides this socket (chat.js): the room's lines so far, then
      // each new one.
      onChatHistory: (message) => this.onChatHistory(message),
      onChat: (message) => this.onChatLine(message),
      // The socket is down: the game is followed over HTTP meanwhile (a
      // takeback shortens the moves, so it counts as news too).
      onPoll: (game) => {
        const newer = game.moves.length >= this.game?.moves.length || (game.takebacks ?? 0) > (this.game?.takebacks ?? 0);
        if (this.game && newer && this.game.status !== 'finished') this.update(game);
      },
      onStatus: (status) => {
        this.connection = status;
        this.renderConnection();
        if (status === 'closed') {
          this.failures += 1;
          if (this.failures >= 2 && this.seat && this.seat.token) this.checkSeat();
        }
      },
    });
  },

  // The server gave this connection the seat of the account logged in
  // here: the page plays it exactly as with a seat token (actions go over
  // the socket, or over HTTP with the cookie).
  takeAccountSeat(color) {
    if (this.passPlay || (this.seat && this.seat.token)) return;
    const changed = !this.seat || this.seat.color !== color;
    this.seat = { color, token: null };
    if (!changed) return;
    if (!getOrientation(this.gameId)) this.orientation = color;
    if (this.game) this.render();
  },

  // Pass and play: the other seat's own connection, so both seats show as
  // connected and each colour's actions go through its own socket.
  connectPartner() {
    if (!this.passPlay || !this.seat || this.partnerSocket) return;
    const partner = this.passPlay.other(this.seat);
    this.socketColor = this.seat.color;
    this.partnerSocket = new GameSocket(this.gameId, partner.token, {
      // Both sockets carry the same states; the partner's count only while
      // the main one is down (two ordered streams interleaved could step
      // the view back and play a sound twice).
      onState: (game) => {
        if (!this.socket || !this.socket.isOpen()) this.update(game);
      },
      onPresence: () => {},
      onError: (message) => this.onServerError(message),
      onStatus: () => {},
    });
  },

  // Sends over the WebSocket of the acting seat; false when it is down.
  sendOnSocket(message) {
    const partner = this.passPlay && this.seat && this.seat.color !== this.socketColor;
    const socket = partner ? this.partnerSocket : this.socket;
    return !!socket && socket.send(message);
  },

  // The server refuses the upgrade for a token it does not know (say, the
  // database was reset). If a spectator connection works while ours keeps
  // failing, the stored seat is dead: forget it and watch instead.
  checkSeat() {
    if (this.checkingSeat) return;
    this.checkingSeat = true;
    const scheme = window.location.protocol === 'https:' ? 'wss' : 'ws';
    const probe = new WebSocket(`${scheme}://${window.location.host}/ws/games/${encodeURIComponent(this.gameId)}`);
    const done = () => {
      this.checkingSeat = false;
    };
    probe.addEventListener('message', () => {
      probe.close(1000);
      done();
      if (!this.seat || !this.seat.token || this.failures < 2 || !this.socket) return;
      saveSeat(this.gameId, null);
      this.seat = null;
      this.socket.stop();
      this.socket = null;
      if (this.passPlay) {
        saveBothSeats(this.gameId, null);
        this.passPlay = null;
        if (this.partnerSocket) this.partnerSocket.stop();
        this.partnerSocket = null;
      }
      this.flash(t('The server no longer recognises this browser’s seat in the game, so you are watching it.'));
      this.connect();
      this.render();
    }, { once: true });
    probe.addEventListener('close', done, { once: true });
  },

  onServerError(message) {
    // The answer to a chat line just sent (chat.js): said in the chat box.
    if (this.chat && this.chat.pending !== null && ['forbidden', 'rate_limited', 'bad_request'].includes(message.code)) {
      this.chat.refused(message);
      return;
    }
    this.clearPending();
    this.flash(explain(message.code, message.message));
    this.render();
  },

  // "Live" while the game is played; a finished game's socket (kept for a
  // rematch offer) is not news.
  renderConnection() {
    const labels = { connecting: t('Connecting…'), open: t('Live'), closed: t('Connection lost, reconnecting…'), finished: '' };
    const over = this.game && this.game.status === 'finished';
    const state = over ? 'finished' : this.connection;
    this.connectionEl.textContent = labels[state] ?? '';
    this.connectionEl.className = `connection ${state}`;
  },
};

// The server's refusals (docs/API.md's error codes) in words.
function explain(code, message) {
  const known = {
    illegal_move: t('That move is not legal here.'),
    not_your_turn: t('It is not your turn.'),
    game_over: t('The game is already over.'),
    forbidden: t('You are watching this game and cannot move.'),
    unauthorized: t('Your seat is not recognised by the server.'),
    rate_limited: t('Too many actions; slow down a little.'),
  };
  return known[code] || message || t('The server refused that.');
}

// The game page (/games/{id}): play with a seat token (or, logged in, with
// the seat the account holds: the server says `authenticated` on the
// socket), watch without one, replay once finished. Everything drawn comes from the last GameState the
// server sent; user input only ever becomes a request to the server.

import { AnalysisPanel } from './analysis.js';
import { api, asPlayer, createGame, loadLevels, timeControlOf } from './api.js';
import { setPlaying } from './challenges.js';
import { GameChat, chatOpponent } from './chat.js';
import { h, clear, pathIcon } from './dom.js';
import { BoardView, destsOf } from './board.js';
import { isStandardStart, kingSquare, parseFen, positionsOf, splitUci } from './chess.js';
import {
  capitalize, formatClock, matchLabel, moveLabel, opposite, ratingText, resultText, sideLabel, timeControlText,
} from './format.js';
import { GameSocket } from './socket.js';
import { OfferControls } from './offers.js';
import { pieceElement } from './pieces.js';
import {
  getBothSeats, getInvite, getOrientation, getPlayer, getSeat, getSettings, saveBothSeats, saveOrientation, saveSeat,
  saveSettings,
} from './storage.js';
import { lowTimeThresholdMs } from './lowtime.js';
import { PassAndPlay } from './passplay.js';
import { premoveDests, premoveToPlay } from './premove.js';
import { muteButton, playSound, soundFor } from './sound.js';
import { changeText, playerLink, ratingChanges } from './player.js';
import { currentAccount } from './session.js';

const PENDING_TIMEOUT_MS = 8000;

export async function gamePage(root, gameId) {
  document.title = 'Game · Rookery';
  const levelsPromise = loadLevels();
  let game;
  try {
    game = await api('GET', `/api/games/${encodeURIComponent(gameId)}`);
  } catch (error) {
    clear(root, h('section', { class: 'card narrow' },
      h('h1', null, error.status === 404 ? 'Game not found' : 'Could not load the game'),
      h('p', null, error.status === 404 ? 'This game does not exist. The link may be mistyped.' : error.message),
      h('p', null, h('a', { class: 'button', href: '/' }, 'Start a new game'))));
    return;
  }
  const [levels, account] = await Promise.all([levelsPromise, currentAccount()]);

  const both = getBothSeats(gameId);
  // A seat token of this browser, else the seat of the account logged in
  // here: it needs no token (the socket's cookie brings it, and the server
  // confirms with `authenticated`), and it is never joined twice.
  let seat = both ? both[game.turn] : getSeat(gameId) || accountSeat(game, account);
  let notice = null;
  const invite = inviteFromLink();
  if (seat && invite && game.status === 'waiting') {
    // The creator opened their own invite link: keep the seat, never take
    // the other one (that would seat one browser on both sides).
    notice = `This is your own invite link: you already play ${seat.color} here. Send the link to your friend.`;
  } else if (!seat && game.status === 'waiting' && (game.joinable || invite)) {
    // An invite (a private game's secret link) asks before taking the seat:
    // a link can be opened by mistake, or by someone it was not meant for.
    // An open game's plain address takes the free seat at once, as the
    // contract says, and a click on an open seek in the lobby already was
    // the choice to play it.
    if (!invite || await askToJoin(root, game, levels)) {
      try {
        const joined = await joinGame(gameId, invite);
        seat = joined.seat;
        saveSeat(gameId, seat);
        game = joined.game;
        notice = `You joined the game as ${seat.color}.`;
      } catch (error) {
        notice = joinRefusal(error);
        game = await api('GET', `/api/games/${encodeURIComponent(gameId)}`).catch(() => game);
      }
    }
  } else if (!seat && game.status === 'waiting') {
    notice = 'This game is private: only the friend with its invite link can join. You are watching.';
  } else if (!seat && invite) {
    notice = 'This invite has been used: the game has both its players. You are watching.';
  }
  // Once the secret has done its job (seat taken, or the game is under
  // way), keep it out of the address bar, bookmarks and history; a visitor
  // who chose to watch keeps it, to join later. The creator's page shows the
  // link in its invite box.
  if (invite && (seat || game.status !== 'waiting')) window.history.replaceState(null, '', window.location.pathname);
  const view = new GameView(root, gameId, levels, seat, both, chatIdentity(account));
  // A spectator of a game with one human sees it from that human's side.
  if (!seat && game.white.kind === 'ai' && game.black.kind === 'human') view.orientation = 'black';
  view.orientation = getOrientation(gameId) || view.orientation;
  view.update(game);
  if (notice) view.flash(notice);
  view.connect();
  view.connectPartner();
  if (game.clock && !getSettings(gameId)) {
    // A friend or spectator did not create the game: read its time control
    // from the PGN, for the clock label and a rematch at the same speed.
    const clock = await timeControlOf(gameId);
    if (clock) {
      saveSettings(gameId, { clock });
      view.render();
    }
  }
}

// Who may chat on this page (chat.js): the account logged in here (its
// cookie goes with the requests), else the name saved in this browser (its
// player token); null for an anonymous visitor.
function chatIdentity(account) {
  if (account) return { name: account.name, token: null };
  const player = getPlayer();
  return player ? { name: player.name, token: player.token } : null;
}

// The colour the account plays in this game, as a seat without a token.
function accountSeat(game, account) {
  if (!account) return null;
  const name = account.name.toLowerCase();
  const color = ['white', 'black'].find((side) => game[side].kind === 'human' && (game[side].name || '').toLowerCase() === name);
  return color ? { color, token: null } : null;
}

function joinGame(gameId, invite) {
  return asPlayer('POST', `/api/games/${encodeURIComponent(gameId)}/join`, invite ? { invite } : undefined);
}

// The invite secret of a link `/games/{id}#invite=SECRET`. It lives in the
// fragment, which browsers never send to the server (nor in a Referer).
function inviteFromLink() {
  const params = new URLSearchParams(window.location.hash.replace(/^#/, ''));
  const invite = (params.get('invite') || '').trim();
  return invite || null;
}

// "Join as black, 5+3, against alice?": the seat is taken only once the
// visitor says so. Resolves true to join, false to watch.
function askToJoin(root, game, levels) {
  const free = ['white', 'black'].find((color) => game[color].kind === 'human' && game[color].taken === false) || 'black';
  const host = game[opposite(free)];
  const opponent = host.kind === 'ai' ? sideLabel(host, opposite(free), levels) : host.name || 'an anonymous player';
  const question = `Join as ${free}, ${timeControlText(game)}, against ${opponent}?`;
  return new Promise((resolve) => {
    clear(root, h('section', { class: 'card narrow join-prompt', role: 'dialog', 'aria-labelledby': 'join-question' },
      h('h1', { id: 'join-question' }, question),
      isStandardStart(game.initial_fen) ? null : h('p', null, 'The game starts from a custom position.'),
      game.rated === false ? h('p', { class: 'muted' }, 'A casual game: its result does not count on the scoreboard.') : null,
      h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'primary', onclick: () => resolve(true) }, `Join as ${free}`),
        h('button', { type: 'button', onclick: () => resolve(false) }, 'Just watch'))));
  });
}

function joinRefusal(error) {
  const reasons = {
    same_player: 'You already hold the other seat of this game with your name, so you are watching it here.',
    forbidden: 'This invite link does not open this game (it may be mistyped): you are watching it.',
    seat_taken: 'Someone else took the seat first: you are watching the game.',
    game_over: 'The game is over.',
  };
  return reasons[error.code] || `Could not join: ${error.message}`;
}

class GameView {
  constructor(root, gameId, levels, seat, bothSeats = null, me = null) {
    this.gameId = gameId;
    // The players' chat, once this page is known to be one of two named
    // players (syncChat).
    this.me = me;
    this.chat = null;
    this.chatSlot = h('div', { class: 'chat-slot', hidden: true });
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

    this.board = new BoardView({ onMove: (uci) => this.sendMove(uci), onCancel: () => this.cancelPremove(), label: 'Chess board' });
    this.bars = { top: this.playerBar(), bottom: this.playerBar() };
    this.title = h('h1', { class: 'game-title' });
    this.meta = h('p', { class: 'game-meta' });
    this.statusEl = h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
    this.connectionEl = h('span', { class: 'connection' });
    this.firstMoveEl = h('p', { class: 'first-move', hidden: true });
    this.flashEl = h('p', { class: 'flash', role: 'alert' });
    this.inviteEl = h('div', { class: 'invite', hidden: true });
    this.bannerEl = h('div', { class: 'banner', hidden: true, 'aria-live': 'polite' });
    // Draw, takeback and rematch offers, takeback and abort (offers.js).
    this.offers = new OfferControls(this);
    this.movesEl = h('ol', { class: 'moves', 'aria-label': 'Moves' });
    this.navButtons = {
      first: h('button', { type: 'button', 'aria-label': 'First position', onclick: () => this.goTo(0) }, icon('first')),
      prev: h('button', { type: 'button', 'aria-label': 'Previous move', onclick: () => this.step(-1) }, icon('prev')),
      next: h('button', { type: 'button', 'aria-label': 'Next move', onclick: () => this.step(1) }, icon('next')),
      last: h('button', { type: 'button', 'aria-label': 'Last move', onclick: () => this.goTo(Infinity) }, icon('last')),
    };
    this.resignButton = h('button', { type: 'button', class: 'danger', onclick: () => this.resign() }, 'Resign');
    this.drawButton = h('button', { type: 'button', onclick: () => this.sendAction('draw') }, 'Offer draw');
    // Resigning before the opponent arrives aborts the game (no result).
    this.cancelButton = h('button', { type: 'button', onclick: () => this.sendAction('resign') }, 'Cancel game');
    this.flipButton = h('button', { type: 'button', 'aria-label': 'Flip board', onclick: () => this.flip() }, 'Flip board');
    this.pgnLink = h('a', {
      class: 'button',
      href: `/api/games/${encodeURIComponent(gameId)}/pgn`,
      download: `rookery-${gameId}.pgn`,
    }, 'Download PGN');

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
        this.offers.el,
        h('div', { class: 'moves-box' }, this.movesEl),
        h('nav', { class: 'replay-nav', 'aria-label': 'Move navigation' }, Object.values(this.navButtons)),
        h('div', { class: 'actions' }, this.resignButton, this.drawButton, this.cancelButton, this.flipButton, this.pgnLink, muteButton(h)),
        this.chatSlot,
        this.passPlay ? this.passPlay.control() : null,
        this.analysis.el)));

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

  playerBar() {
    const name = h('span', { class: 'player-name' });
    const rating = h('span', { class: 'player-rating' });
    const tag = h('span', { class: 'player-tag' });
    const presence = h('span', { class: 'presence' });
    const clock = h('div', { class: 'clock', role: 'timer', 'aria-live': 'off' });
    const material = h('span', { class: 'material' });
    const el = h('div', { class: 'player-bar' }, h('div', { class: 'player' }, presence, name, rating, tag, material), clock);
    return { el, name, rating, tag, presence, clock, material, color: null };
  }

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
  }

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
  }

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
  }

  // Sends over the WebSocket of the acting seat; false when it is down.
  sendOnSocket(message) {
    const partner = this.passPlay && this.seat && this.seat.color !== this.socketColor;
    const socket = partner ? this.partnerSocket : this.socket;
    return !!socket && socket.send(message);
  }

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
      this.flash('The server no longer recognises this browser’s seat in the game, so you are watching it.');
      this.connect();
      this.render();
    }, { once: true });
    probe.addEventListener('close', done, { once: true });
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
    this.offers.onState(previous, game);
    const sound = soundFor(previous, game, previous && pieceCount(game.fen) < pieceCount(previous.fen));
    if (sound) playSound(sound);
    this.render();
    this.playPremove();
  }

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
      this.flash('Your premove was not legal after your opponent’s move, so it was dropped.');
      this.render();
    }
  }

  cancelPremove() {
    if (!this.premove) return;
    this.premove = null;
    this.render();
  }

  canPremove() {
    const game = this.game;
    return !!this.seat && !this.passPlay && game.status === 'active' && game.turn !== this.seat.color
      && this.viewPly === null;
  }

  onServerError(message) {
    this.clearPending();
    this.flash(explain(message.code, message.message));
    this.render();
  }

  flash(text) {
    this.flashEl.textContent = text || '';
  }

  clearPending() {
    this.pending = null;
    clearTimeout(this.pendingTimer);
  }

  // --- input -------------------------------------------------------------

  canMove() {
    const game = this.game;
    // Moves count only once both seats are filled (the server says
    // not_your_turn while waiting), so the board stays still until then.
    return !!this.seat && game.status === 'active' && game.turn === this.seat.color
      && this.viewPly === null && !this.pending;
  }

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
  }

  async sendAction(type) {
    if (!this.seat || this.game.status === 'finished') return;
    this.flash('');
    if (this.sendOnSocket({ type })) return;
    await this.post(type);
  }

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
  }

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
  }

  flip() {
    this.orientation = opposite(this.orientation);
    saveOrientation(this.gameId, this.orientation);
    this.render();
  }

  step(delta) {
    const current = this.viewPly === null ? this.game.moves.length : this.viewPly;
    this.goTo(current + delta);
  }

  goTo(ply) {
    const last = this.game.moves.length;
    const target = Math.max(0, Math.min(last, ply));
    this.viewPly = target >= last ? null : target;
    this.render();
  }

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
  }

  // --- rendering -----------------------------------------------------------

  positions() {
    const game = this.game;
    if (!this.positionsCache || this.positionsCache.length !== game.moves.length + 1) {
      this.positionsCache = positionsOf(game.initial_fen, game.moves);
    }
    return this.positionsCache;
  }

  render() {
    const game = this.game;
    const levels = this.levels;
    const total = game.moves.length;
    const ply = this.viewPly === null ? total : this.viewPly;

    this.title.textContent = matchLabel(game, levels);
    const yourMove = this.seat && !this.passPlay && game.status === 'active' && game.turn === this.seat.color;
    document.title = `${yourMove ? '● Your move · ' : ''}${matchLabel(game, levels)} · Rookery`;
    const meta = [];
    if (game.clock) meta.push(`Clock ${clockLabel(game, this.gameId)}`);
    else meta.push('No clock');
    if (!isStandardStart(game.initial_fen)) meta.push('Custom start');
    if (game.rated === false) meta.push(casualText(game, this.gameId));
    if (typeof game.spectators === 'number' && game.status !== 'finished') meta.push(`${game.spectators} watching`);
    if (this.passPlay) meta.push('Pass and play');
    else if (this.seat) meta.push(`You play ${this.seat.color}`);
    else meta.push('Spectating');
    this.meta.textContent = meta.join(' · ');

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
    else if (this.canPremove()) dests = premoveDests(position.board, this.seat.color);
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

    this.navButtons.first.disabled = ply === 0;
    this.navButtons.prev.disabled = ply === 0;
    this.navButtons.next.disabled = ply === total;
    this.navButtons.last.disabled = ply === total;

    const playing = !!this.seat && game.status !== 'finished';
    // A game start elsewhere does not take this tab away from a game.
    setPlaying(playing);
    this.resignButton.hidden = !playing || game.status !== 'active';
    this.resignButton.textContent = this.resignArmed ? 'Confirm resignation' : 'Resign';
    // A standing offer is answered in the offers box.
    this.drawButton.hidden = !playing || game.status !== 'active' || this.opponentIsAi() || !!game.draw_offer;
    this.cancelButton.hidden = !playing || game.status !== 'waiting';
    this.renderConnection();
    this.analysis.render(ply);
    this.syncChat();
  }

  // The chat appears once the page holds a seat of a named player facing
  // another named player (a seat the socket confirms later, an opponent
  // who joins later), and then stays for the page's life.
  syncChat() {
    if (this.chat || this.passPlay) return;
    const opponent = chatOpponent(this.game, this.seat, this.me);
    if (!opponent) return;
    this.chat = new GameChat(this.gameId, this.me, opponent, { onGone: () => { this.chatSlot.hidden = true; } });
    this.chatSlot.append(this.chat.el);
    this.chatSlot.hidden = false;
  }

  opponentIsAi() {
    if (!this.seat) return false;
    const other = this.game[opposite(this.seat.color)];
    return !!other && other.kind === 'ai';
  }

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
      bar.clock.setAttribute('aria-label', `${capitalize(color)} clock`);
      bar.name.textContent = sideLabel(side, color, this.levels);
      const rated = side && side.kind === 'human' && side.name && typeof side.rating === 'number';
      if (rated) clear(bar.name, playerLink(side.name));
      bar.rating.textContent = rated ? ratingText(side.rating, side.provisional) : '';
      const change = this.ratingChanges && this.ratingChanges[color];
      if (rated && typeof change === 'number') bar.rating.textContent += ` ${changeText(change)}`;
      const mine = this.seat && this.seat.color === color;
      bar.tag.textContent = mine && !this.passPlay ? '(you)' : '';
      let presence = '';
      let presenceLabel = '';
      if (side && side.kind === 'human') {
        // `taken` is the server's addition to the contract; without it a
        // nameless, unconnected seat of a waiting game is the free one.
        const free = game.status === 'waiting' && !mine
          && (side.taken === false || (side.taken === undefined && !side.name && !side.connected));
        presence = free ? 'free' : side.connected ? 'online' : 'offline';
        presenceLabel = free ? 'Seat free' : side.connected ? 'Connected' : 'Not connected';
        if (free) bar.name.textContent = 'Waiting for a player…';
      } else if (side && side.kind === 'ai') {
        presence = 'ai';
        presenceLabel = 'Computer';
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
        if (lead.points > 0) bar.material.setAttribute('aria-label', `${capitalize(color)} is ahead by ${lead.points} in material`);
        else bar.material.removeAttribute('aria-label');
      }
    }
  }

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
  }

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
      ? `Make your first move within ${seconds} s, or the game is aborted.`
      : `${capitalize(game.turn)} has ${seconds} s to make a first move, or the game is aborted.`;
    if (this.firstMoveEl.textContent !== text) this.firstMoveEl.textContent = text;
  }

  // Below this a clock shows as low (see lowtime.js for the rule).
  lowTimeMs() {
    const settings = getSettings(this.gameId);
    const clock = settings && settings.clock ? settings.clock : guessClock(this.game);
    return lowTimeThresholdMs(clock ? clock.initial * 1000 : NaN);
  }

  renderStatus(ply, total) {
    const game = this.game;
    let text;
    if (game.status === 'finished') {
      // The banner says who won and why; the status line does not repeat it.
      text = '';
    } else if (this.pending) {
      text = 'Sending your move…';
    } else if (this.passPlay && game.status === 'active') {
      text = `${capitalize(game.turn)} to play${game.check ? ': in check!' : '.'}`;
    } else if (this.premove) {
      text = 'Premove queued: it is sent when your turn comes (Escape or a click elsewhere cancels it).';
    } else if (game.status === 'waiting' && this.seat) {
      text = 'Waiting for your friend to join. Send them the link above.';
    } else if (game.status === 'waiting') {
      text = 'Waiting for a player to join.';
    } else if (this.seat) {
      const mine = game.turn === this.seat.color;
      const other = game[opposite(this.seat.color)];
      if (mine) text = game.check ? 'Your move: you are in check!' : 'Your move.';
      else text = other && other.kind === 'ai' ? 'Rookery is thinking…' : 'Waiting for your opponent to move.';
    } else {
      text = `${capitalize(game.turn)} to move${game.check ? ', in check' : ''}.`;
    }
    if (ply !== total) {
      const where = ply === 0 ? 'the start position' : `the position after ${moveLabel(game.initial_fen, ply, game.san[ply - 1])}`;
      text = `Viewing ${where}.${game.status === 'finished' ? '' : ' Press “Last move” to return to the game.'}`;
    }
    this.statusEl.textContent = text;
  }

  renderConnection() {
    const labels = { connecting: 'Connecting…', open: 'Live', closed: 'Connection lost, reconnecting…', finished: '' };
    this.connectionEl.textContent = labels[this.connection] ?? '';
    this.connectionEl.className = `connection ${this.connection}`;
  }

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
      clear(this.inviteEl, h('p', null, 'The invite link for this private game is on the device where you created it.'));
      return;
    }
    const link = `${window.location.origin}/games/${encodeURIComponent(this.gameId)}${invite ? `#invite=${invite}` : ''}`;
    const input = h('input', { id: 'invite-link', class: 'invite-link', type: 'text', readonly: true, value: link });
    const copy = h('button', { type: 'button' }, 'Copy link');
    copy.addEventListener('click', async () => {
      input.select();
      try {
        await navigator.clipboard.writeText(link);
        copy.textContent = 'Copied';
      } catch {
        copy.textContent = 'Select and copy';
      }
    });
    const label = game.joinable
      ? 'Open seek: anyone can join from the lobby, or send this link'
      : 'Invite a friend: send this link to them only';
    clear(this.inviteEl,
      h('label', { for: 'invite-link' }, label),
      h('div', { class: 'invite-row' }, input, copy));
  }

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
      verdict = winner === this.seat.color ? 'You won!' : 'You lost.';
    }
    const rematch = h('button', { type: 'button', class: 'primary', onclick: () => this.rematch(rematch) },
      this.seat ? 'Rematch' : 'Play these settings');
    clear(this.bannerEl,
      h('h2', { class: 'banner-headline' }, headline),
      reason ? h('p', { class: 'banner-reason' }, reason) : null,
      verdict ? h('p', { class: 'banner-verdict' }, verdict) : null,
      h('p', { class: 'banner-result' }, game.result || ''),
      h('div', { class: 'banner-actions' }, rematch, h('a', { class: 'button', href: '/' }, 'New game')));
  }

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
          'aria-label': `${capitalize(color)}: ${san}`,
        }, san));
      });
      clear(this.movesEl, rows.length ? rows : h('li', { class: 'no-moves' }, 'No moves yet.'));
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
  }

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
      this.flash(`Could not start a new game: ${error.message}`);
    }
  }
}

const VALUES = { P: 1, N: 3, B: 3, R: 5, Q: 9 };

// Pieces on the board of a FEN: fewer after a move means a capture.
function pieceCount(fen) {
  return (String(fen).split(' ')[0].match(/[a-z]/gi) || []).length;
}

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

const ICONS = {
  first: 'M5 4h2v12H5z M16 4v12L8 10z',
  prev: 'M14 4v12L6 10z',
  next: 'M6 4v12l8-6z',
  last: 'M13 4h2v12h-2z M4 4v12l8-6z',
};

// Step buttons as drawn triangles: media-control glyphs are missing from many fonts.
const icon = (name) => pathIcon(ICONS[name]);

// "Casual", and why when the rest of the header does not say it (a custom
// start does): the rules are docs/API.md's "Rated and casual games".
function casualText(game, gameId) {
  if (!isStandardStart(game.initial_fen)) return 'Casual';
  const settings = getSettings(gameId);
  const clock = settings && settings.clock ? settings.clock : guessClock(game);
  if (clock && clock.initial < 60) return 'Casual: under a minute on the clock';
  const computer = game.white.kind === 'ai' || game.black.kind === 'ai';
  if (computer && (game.takebacks || 0) > 0) return 'Casual: a move was taken back against the computer';
  return 'Casual';
}

function clockLabel(game, gameId) {
  const settings = getSettings(gameId);
  const clock = settings && settings.clock ? settings.clock : guessClock(game);
  return clock ? `${Math.round((clock.initial / 60) * 100) / 100}+${clock.increment}` : '';
}

// Without the creation settings (a friend who joined), the initial time is
// known exactly only if the server reports it; otherwise the larger remaining
// time rounded up to a whole minute is the best guess.
function guessClock(game) {
  if (!game.clock) return null;
  const increment = Math.round((game.clock.increment_ms || 0) / 1000);
  if (typeof game.clock.initial_ms === 'number') return { initial: Math.round(game.clock.initial_ms / 1000), increment };
  const most = Math.max(game.clock.white_ms, game.clock.black_ms);
  return { initial: Math.max(60, Math.ceil(most / 60000) * 60), increment };
}

function explain(code, message) {
  const known = {
    illegal_move: 'That move is not legal here.',
    not_your_turn: 'It is not your turn.',
    game_over: 'The game is already over.',
    forbidden: 'You are watching this game and cannot move.',
    unauthorized: 'Your seat is not recognised by the server.',
    rate_limited: 'Too many actions; slow down a little.',
  };
  return known[code] || message || 'The server refused that.';
}

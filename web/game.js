// The game page (/games/{id}): play with a seat token (or, logged in, with
// the seat the account holds: the server says `authenticated` on the
// socket), watch without one, replay once finished. Everything drawn comes from the last GameState the
// server sent; user input only ever becomes a request to the server.
//
// This file opens the page: it loads the game, takes a seat (asking first
// when the link is an invite) or watches, and starts the view, GameView
// (gameview.js and the modules it names).

import { api, asPlayer, loadLevels, timeControlOf } from './api.js';
import { returnToArena } from './arena.js';
import { h, clear } from './dom.js';
import { isStandardStart } from './chess.js';
import { opposite, sideLabel, timeControlText } from './format.js';
import {
  getBothSeats, getOrientation, getPlayer, getSeat, getSettings, saveSeat, saveSettings,
} from './storage.js';
import { currentAccount } from './session.js';
import { GameView } from './gameview.js';
import { t } from './i18n.js';

export async function gamePage(root, gameId) {
  document.title = t('Game · Rookery');
  const levelsPromise = loadLevels();
  let game;
  try {
    game = await api('GET', `/api/games/${encodeURIComponent(gameId)}`);
  } catch (error) {
    clear(root, h('section', { class: 'card narrow' },
      h('h1', null, error.status === 404 ? t('Game not found') : t('Could not load the game')),
      h('p', null, error.status === 404 ? t('This game does not exist. The link may be mistyped.') : error.message),
      h('p', null, h('a', { class: 'button', href: '/' }, t('Start a new game')))));
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
    notice = t('This is your own invite link: you already play {side, select, white {white} other {black}} here. Send the link to your friend.', { side: seat.color });
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
        notice = t('You joined the game as {side, select, white {white} other {black}}.', { side: seat.color });
      } catch (error) {
        notice = joinRefusal(error);
        game = await api('GET', `/api/games/${encodeURIComponent(gameId)}`).catch(() => game);
      }
    }
  } else if (!seat && game.status === 'waiting') {
    notice = t('This game is private: only the friend with its invite link can join. You are watching.');
  } else if (!seat && invite) {
    notice = t('This invite has been used: the game has both its players. You are watching.');
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
  returnToArena(gameId, view);
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
  const opponent = host.kind === 'ai' ? sideLabel(host, opposite(free), levels) : host.name || t('an anonymous player');
  const question = t('Join as {side, select, white {white} other {black}}, {clock}, against {opponent}?', { side: free, clock: timeControlText(game), opponent });
  return new Promise((resolve) => {
    clear(root, h('section', { class: 'card narrow join-prompt', role: 'dialog', 'aria-labelledby': 'join-question' },
      h('h1', { id: 'join-question' }, question),
      isStandardStart(game.initial_fen) ? null : h('p', null, t('The game starts from a custom position.')),
      game.rated === false ? h('p', { class: 'muted' }, t('A casual game: its result does not count on the scoreboard.')) : null,
      h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'primary', onclick: () => resolve(true) }, t('Join as {side, select, white {white} other {black}}', { side: free })),
        h('button', { type: 'button', onclick: () => resolve(false) }, t('Just watch')))));
  });
}

function joinRefusal(error) {
  const reasons = {
    same_player: t('You already hold the other seat of this game with your name, so you are watching it here.'),
    forbidden: t('This invite link does not open this game (it may be mistyped): you are watching it.'),
    seat_taken: t('Someone else took the seat first: you are watching the game.'),
    game_over: t('The game is over.'),
  };
  return reasons[error.code] || t('Could not join: {reason}', { reason: error.message });
}

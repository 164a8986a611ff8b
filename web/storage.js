// What the browser remembers between visits: the seat token of every game
// this browser plays (so a reload or a lost connection keeps the seat), the
// invite secret of the private games it created (to show the invite link
// again), the settings a game was created with (for rematches), the
// registered player, the name of the account logged in here, and the
// opponents whose chat this browser mutes.
// localStorage can be unavailable (private modes); then we simply forget.

function read(key) {
  try {
    const raw = window.localStorage.getItem(key);
    return raw ? JSON.parse(raw) : null;
  } catch {
    return null;
  }
}

function write(key, value) {
  try {
    if (value === null) window.localStorage.removeItem(key);
    else window.localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // Storage full or disabled: the game still works for this page's lifetime.
  }
}

export const seatKey = (gameId) => `rookery:seat:${gameId}`;

export function getSeat(gameId) {
  const seat = read(seatKey(gameId));
  if (seat && typeof seat.token === 'string' && (seat.color === 'white' || seat.color === 'black')) {
    return seat;
  }
  return null;
}

export function saveSeat(gameId, seat) {
  write(seatKey(gameId), seat ? { color: seat.color, token: seat.token } : null);
}

const inviteKey = (gameId) => `rookery:invite:${gameId}`;

export function getInvite(gameId) {
  const invite = read(inviteKey(gameId));
  return typeof invite === 'string' ? invite : null;
}

export function saveInvite(gameId, invite) {
  write(inviteKey(gameId), typeof invite === 'string' ? invite : null);
}

export function getSettings(gameId) {
  return read(`rookery:settings:${gameId}`);
}

export function saveSettings(gameId, settings) {
  write(`rookery:settings:${gameId}`, settings);
}

export function getPlayer() {
  const player = read('rookery:player');
  return player && typeof player.token === 'string' && typeof player.name === 'string' ? player : null;
}

export function savePlayer(player) {
  write('rookery:player', player ? { id: player.id, name: player.name, token: player.token } : null);
}

// The account logged in on this browser, as a hint only: the session itself
// is an HttpOnly cookie the page cannot read. Without the hint the page
// does not ask the server who is logged in, so an anonymous visitor's page
// makes no request that is bound to fail (a browser logs every 401 in its
// console). The server's answer always wins over the hint.
export function getAccountHint() {
  const hint = read('rookery:account');
  return hint && typeof hint.name === 'string' ? hint : null;
}

export function saveAccountHint(account) {
  write('rookery:account', account ? { name: account.name } : null);
}

// The ids of the games this browser holds a seat in (one seat, or both for
// pass and play): the "My games" of a device with no account.
export function heldGameIds() {
  const ids = new Set();
  try {
    for (let index = 0; index < window.localStorage.length; index++) {
      const key = window.localStorage.key(index);
      const match = key && key.match(/^rookery:seats?:(.+)$/);
      if (match) ids.add(match[1]);
    }
  } catch {
    // Storage disabled: this browser holds nothing.
  }
  return [...ids];
}

// Small preferences of this browser (sound muted, pass-and-play board
// turning): one key each.
export function getPreference(name) {
  return read(`rookery:pref:${name}`);
}

export function savePreference(name, value) {
  write(`rookery:pref:${name}`, value);
}

// The board orientation the user chose for a game (flip), kept across reloads.
export function getOrientation(gameId) {
  const value = read(`rookery:orientation:${gameId}`);
  return value === 'white' || value === 'black' ? value : null;
}

export function saveOrientation(gameId, orientation) {
  write(`rookery:orientation:${gameId}`, orientation);
}

// Both seats of a pass-and-play game, held by this browser.
export function getBothSeats(gameId) {
  const seats = read(`rookery:seats:${gameId}`);
  const valid = (seat, color) => seat && seat.color === color && typeof seat.token === 'string';
  return seats && valid(seats.white, 'white') && valid(seats.black, 'black') ? seats : null;
}

export function saveBothSeats(gameId, seats) {
  write(`rookery:seats:${gameId}`, seats ? { white: seats.white, black: seats.black } : null);
}

// The opponents whose chat lines this browser hides (chat.js), one key a
// name, in lower case as the server compares names.
const chatMuteKey = (name) => `rookery:chat-mute:${String(name).toLowerCase()}`;

export function getChatMuted(name) {
  return read(chatMuteKey(name)) === true;
}

export function saveChatMuted(name, muted) {
  write(chatMuteKey(name), muted ? true : null);
}

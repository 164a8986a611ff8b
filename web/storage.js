// What the browser remembers between visits: the seat token of every game
// this browser plays (so a reload or a lost connection keeps the seat), the
// invite secret of the private games it created (to show the invite link
// again), the settings a game was created with (for rematches) and the
// registered player.
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

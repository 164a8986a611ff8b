// The only way the client talks HTTP to the server: the routes and error
// shape of the public contract (docs/API.md). The session cookie of a
// logged-in person goes with every request by itself (same origin).

import { getAccountHint, getPlayer, saveBothSeats, saveInvite, savePlayer, saveSeat, saveSettings } from './storage.js';
import { t } from './i18n.js';

export class ApiError extends Error {
  constructor(status, code, message, retryAfter = null) {
    super(message);
    this.status = status;
    this.code = code;
    // Seconds to wait, from a 429's Retry-After.
    this.retryAfter = retryAfter;
  }
}

// `body` goes as JSON; `form` (an object) form-encoded, as lichess's
// challenge routes take it.
export async function api(method, path, { body, form, token } = {}) {
  const headers = { Accept: 'application/json' };
  let payload;
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = JSON.stringify(body);
  } else if (form !== undefined) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    payload = new URLSearchParams(form).toString();
  }
  if (token) headers.Authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch(path, { method, headers, body: payload });
  } catch {
    throw new ApiError(0, 'network', t('Cannot reach the server. Check your connection.'));
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    // The contract's `{"error": {"code", "message"}}`, or lichess's flat
    // `{"error": "message"}` on the lichess-shaped routes (challenges).
    const error = data && data.error;
    const flat = typeof error === 'string' ? error : null;
    const retry = Number.parseInt(response.headers.get('Retry-After') || '', 10);
    throw new ApiError(
      response.status,
      (error && error.code) || `http_${response.status}`,
      flat || (error && error.message) || response.statusText || t('Request failed'),
      Number.isFinite(retry) ? retry : null,
    );
  }
  return data;
}

// An NDJSON answer (lichess's lists: a team's members, its tournaments),
// one object a line, as an array.
export async function apiLines(path) {
  let response;
  try {
    response = await fetch(path, { headers: { Accept: 'application/x-ndjson' } });
  } catch {
    throw new ApiError(0, 'network', t('Cannot reach the server. Check your connection.'));
  }
  const text = await response.text();
  if (!response.ok) {
    let message = response.statusText || t('Request failed');
    try {
      const error = JSON.parse(text).error;
      message = typeof error === 'string' ? error : (error && error.message) || message;
    } catch {
      // Not JSON: the status line says enough.
    }
    throw new ApiError(response.status, `http_${response.status}`, message);
  }
  return text.split('\n').filter((line) => line.trim()).map((line) => JSON.parse(line));
}

let levelsPromise = null;

// The AI levels rarely change; one request per page load is enough. A failure
// yields an empty list so pages still render (levels then show by number).
export function loadLevels() {
  if (!levelsPromise) {
    levelsPromise = api('GET', '/api/levels').then(
      (levels) => (Array.isArray(levels) ? levels : []),
      () => [],
    );
  }
  return levelsPromise;
}

// Sends a request as the registered player when there is one: the account
// logged in here (its cookie goes by itself), else the name this browser
// saved (its player token). The server answers 401 for a player token it
// does not know (say, after a database reset); then the player is
// forgotten and the request goes out anonymously.
export async function asPlayer(method, path, body) {
  const player = getAccountHint() ? null : getPlayer();
  try {
    return await api(method, path, { body, token: player ? player.token : undefined });
  } catch (error) {
    if (player && error.status === 401) {
      savePlayer(null);
      return api(method, path, { body });
    }
    throw error;
  }
}

// Creates a game, remembers its seat, invite secret and settings, and
// returns its id.
export async function createGame(body) {
  const created = await asPlayer('POST', '/api/games', body);
  const id = created.game.id;
  if (created.seat) saveSeat(id, created.seat);
  // Pass and play: this browser holds both seats.
  if (Array.isArray(created.seats) && created.seats.length === 2) {
    saveBothSeats(id, { white: created.seats[0], black: created.seats[1] });
  }
  if (created.invite) saveInvite(id, created.invite);
  saveSettings(id, { clock: body.clock || null });
  return id;
}

// The time control of a game from its PGN's TimeControl tag ("300+3"), for
// pages that did not create the game; null when absent or unreadable.
export async function timeControlOf(gameId) {
  try {
    const response = await fetch(`/api/games/${encodeURIComponent(gameId)}/pgn`);
    if (!response.ok) return null;
    const match = (await response.text()).match(/\[TimeControl "(\d+)\+(\d+)"\]/);
    return match ? { initial: Number(match[1]), increment: Number(match[2]) } : null;
  } catch {
    return null;
  }
}

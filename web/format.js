// Words for what the GameState says: player labels, results, clocks.

import { language, t } from './i18n.js';
export const COLORS = ['white', 'black'];
export const opposite = (color) => (color === 'white' ? 'black' : 'white');
export const capitalize = (text) => text.charAt(0).toUpperCase() + text.slice(1);

// The clocks offered when a game or a challenge is made: "initial+increment"
// in seconds.
export const CLOCKS = [
  ['none', t('No clock')],
  ['60+0', '1+0 bullet'],
  ['180+2', '3+2 blitz'],
  ['300+3', '5+3 blitz'],
  ['600+5', '10+5 rapid'],
  ['900+10', '15+10 rapid'],
  ['1800+0', '30+0 classical'],
  ['custom', t('Custom…')],
];

export const playerHref = (name) => `/players/${encodeURIComponent(name)}`;

// "+12", "−7" or "±0".
export const changeText = (change) => (change > 0 ? `+${change}` : change < 0 ? `−${-change}` : '±0');

// "1512" or "1512?" while the rating is provisional (lichess's mark).
export function ratingText(rating, provisional) {
  return `${rating}${provisional ? '?' : ''}`;
}

export function levelLabel(level, levels) {
  const info = (levels || []).find((entry) => entry.level === level);
  if (!info) return t('Level {level}', { level });
  if (typeof info.elo === 'number') return t('Level {level} · {name} (Elo {elo})', { level, name: info.name, elo: info.elo });
  return t('Level {level} · {name}', { level, name: info.name });
}

// The name shown for one side of a game.
export function sideLabel(side, color, levels) {
  if (!side) return color === 'white' ? t('White') : t('Black');
  if (side.kind === 'ai') {
    const info = (levels || []).find((entry) => entry.level === side.level);
    return info ? `Rookery AI ${side.level} · ${info.name}` : `Rookery AI ${side.level}`;
  }
  return side.name || t('Anonymous');
}

// "Moves" as a chess player counts them, one for each side's turn: 16 plies
// are 8 moves. A game begun by black counts black's first ply as a move of
// its own, as the move list numbers it ("1… e5").
export function fullMoves(plies, initialFen) {
  const blackFirst = String(initialFen || '').trim().split(/\s+/)[1] === 'b';
  return Math.ceil((plies + (blackFirst && plies > 0 ? 1 : 0)) / 2);
}

export function movesText(plies, initialFen) {
  const moves = fullMoves(plies, initialFen);
  return t('{count, plural, one {# move} other {# moves}}', { count: moves });
}

// Ply `ply` (1: the first) of a game that began at `initialFen`, numbered as
// in a score sheet: "3. Bb5" for white, "2… Nc6" for black.
export function moveLabel(initialFen, ply, san) {
  const fields = String(initialFen).trim().split(/\s+/);
  const index = ply - 1 + (fields[1] === 'b' ? 1 : 0);
  const number = (Number(fields[5]) || 1) + Math.floor(index / 2);
  return `${number}${index % 2 === 0 ? '.' : '…'} ${san}`;
}

export function matchLabel(game, levels) {
  return t('{white} vs {black}', { white: sideLabel(game.white, 'white', levels), black: sideLabel(game.black, 'black', levels) });
}

const REASONS = {
  checkmate: t('by checkmate'),
  stalemate: t('by stalemate'),
  threefold_repetition: t('by threefold repetition'),
  fifty_moves: t('by the fifty-move rule'),
  insufficient_material: t('by insufficient material'),
  agreement: t('by agreement'),
};

// { headline, reason } for a finished game.
export function resultText(game) {
  const { result, termination } = game;
  if (termination === 'aborted') return { headline: t('Game aborted'), reason: t('No result') };
  let headline = t('Game over');
  let loser = null;
  if (result === '1-0') { headline = t('White wins'); loser = 'black'; }
  else if (result === '0-1') { headline = t('Black wins'); loser = 'white'; }
  else if (result === '1/2-1/2') headline = t('Draw');
  let reason = REASONS[termination] || '';
  if (termination === 'resignation') reason = loser ? t('{side, select, white {White} other {Black}} resigned', { side: loser }) : t('by resignation');
  if (termination === 'timeout') {
    reason = loser ? t('{side, select, white {White} other {Black}} ran out of time', { side: loser }) : t('Time ran out, but the opponent cannot mate');
  }
  return { headline, reason: reason ? capitalize(reason) : '' };
}

export function resultShort(game) {
  if (game.status !== 'finished') return game.status === 'waiting' ? t('Waiting for a player') : t('Playing');
  if (game.termination === 'aborted') return t('Aborted');
  return game.result || t('Finished');
}

export function formatClock(ms) {
  const clamped = Math.max(0, ms);
  if (clamped < 10000) {
    const tenths = Math.floor(clamped / 100);
    return `0:0${Math.floor(tenths / 10)}.${tenths % 10}`;
  }
  const totalSeconds = Math.ceil(clamped / 1000);
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = String(totalSeconds % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${seconds}` : `${minutes}:${seconds}`;
}

export function clockSettingsLabel(settings) {
  if (!settings) return t('No clock');
  return `${Math.round(settings.initial / 60 * 100) / 100}+${settings.increment}`;
}

// "5+3" from a game's clock (its initial time, or for a waiting game from
// a server before `initial_ms`, its clocks that have not started), or
// "no clock".
export function timeControlText(game) {
  if (!game.clock) return t('no clock');
  const initial = game.clock.initial_ms || game.clock.white_ms;
  const minutes = Math.round((initial / 60000) * 100) / 100;
  return `${minutes}+${Math.round(game.clock.increment_ms / 1000)}`;
}

// "Rated" or "Casual".
export const ratedText = (game) => (game.rated ? t('Rated') : t('Casual'));

// When a game was created, short: "14:05" today, "27 Nov 14:05" this year,
// "27 Nov 2025" before.
export function gameDateText(ms) {
  if (!ms) return '';
  const date = new Date(ms);
  const now = new Date();
  const time = date.toLocaleTimeString(language, { hour: '2-digit', minute: '2-digit' });
  if (date.toDateString() === now.toDateString()) return time;
  const day = date.toLocaleDateString(language, { day: 'numeric', month: 'short', year: date.getFullYear() === now.getFullYear() ? undefined : 'numeric' });
  return date.getFullYear() === now.getFullYear() ? `${day} ${time}` : day;
}

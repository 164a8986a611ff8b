// The player page (/players/{name}): rating, results, the rating history as
// an SVG graph, the player's games a page at a time, and a "Challenge"
// button for a logged-in visitor (challenges.js), the player's teams
// (teams.js). Also the pieces
// other pages use to show ratings and records.

import { api, ApiError, loadLevels } from './api.js';
import { challengeSection } from './challenges.js';
import { relationSection } from './social.js';
import { h, clear } from './dom.js';
import { changeText, playerHref, ratingText } from './format.js';
import { playerTeamsSection } from './teams.js';
import { gameList } from './watch.js';
import { t } from './i18n.js';

const SVG = 'http://www.w3.org/2000/svg';
const PAGE_SIZE = 20;

// The rating changes a finished rated game made, from its players' histories:
// { white: after - before, black: ... } for the sides that were rated.
export async function ratingChanges(game) {
  const changes = {};
  await Promise.all(['white', 'black'].map(async (color) => {
    const side = game[color];
    if (!side || side.kind !== 'human' || !side.name || typeof side.rating !== 'number') return;
    try {
      const profile = await api('GET', `/api/players/${encodeURIComponent(side.name)}`);
      const point = profile.history.find((entry) => entry.game === game.id);
      if (point) changes[color] = point.after - point.before;
    } catch {
      // Only a nicety: without it the header shows the rating alone.
    }
  }));
  return changes;
}

// "+12", "−7" or "±0" (kept here for the pages that import it from here).
export { changeText };

// A player's name as a link to their page.
export function playerLink(name) {
  return h('a', { href: playerHref(name), class: 'player-link' }, name);
}

function svg(tag, attributes, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) el.setAttribute(key, String(value));
  for (const child of children) el.append(child);
  return el;
}

// The rating after each game (and the start before the first), as a line.
export function ratingGraph(history) {
  if (!history.length) {
    return h('p', { class: 'muted', id: 'rating-graph-empty' }, t('No rated games yet: the graph starts with the first game against another registered player.'));
  }
  const values = [history[0].before, ...history.map((point) => point.after)];
  const width = 640;
  const height = 220;
  const pad = { left: 48, right: 12, top: 14, bottom: 24 };
  let low = Math.min(...values);
  let high = Math.max(...values);
  if (high - low < 40) { low -= 20; high += 20; }
  const x = (index) => pad.left + (index / Math.max(1, values.length - 1)) * (width - pad.left - pad.right);
  const y = (value) => pad.top + (1 - (value - low) / (high - low)) * (height - pad.top - pad.bottom);
  const points = values.map((value, index) => `${x(index).toFixed(1)},${y(value).toFixed(1)}`).join(' ');
  const first = values[0];
  const last = values[values.length - 1];
  // Ratings are written as lichess writes them, with no digit grouping.
  const label = t('Rating history: from {first} to {last} over {count, plural, one {# rated game} other {# rated games}}', { first: String(first), last: String(last), count: history.length });
  const graph = svg('svg', {
    id: 'rating-graph', class: 'rating-graph', viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': label,
  },
  svg('title', {}, label),
  svg('line', { x1: pad.left, y1: y(high), x2: width - pad.right, y2: y(high), class: 'grid' }),
  svg('line', { x1: pad.left, y1: y(low), x2: width - pad.right, y2: y(low), class: 'grid' }),
  svg('text', { x: pad.left - 6, y: y(high) + 4, 'text-anchor': 'end', class: 'axis' }, String(Math.round(high))),
  svg('text', { x: pad.left - 6, y: y(low) + 4, 'text-anchor': 'end', class: 'axis' }, String(Math.round(low))),
  svg('polyline', { points, class: 'line' }));
  history.forEach((point, index) => {
    const dot = svg('circle', {
      cx: x(index + 1).toFixed(1), cy: y(point.after).toFixed(1), r: 3.5, class: `dot ${point.result}`, 'data-after': point.after,
    }, svg('title', {}, `${point.result} against ${point.opponent}: ${point.before} → ${point.after}`));
    graph.append(dot);
  });
  return graph;
}

const RECORD_TITLES = {
  fastest_checkmate: t('Fastest checkmate'),
  fastest_checkmate_vs_ai: t('Fastest checkmate against the computer'),
  longest_game: t('Longest game'),
  biggest_upset: t('Biggest upset'),
  longest_win_streak: t('Longest win streak'),
};

function recordValue(record) {
  const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (record.record === 'biggest_upset') return `${plural(record.value, 'point')} below`;
  if (record.record === 'longest_win_streak') return plural(record.value, 'win');
  return plural(record.value, 'move');
}

// The scoreboard's records section.
export function recordsSection(records, levels) {
  const levelName = (level) => {
    const info = (levels || []).find((entry) => entry.level === level);
    return info ? `level ${level} · ${info.name}` : `level ${level}`;
  };
  const body = records && records.length
    ? h('table', { class: 'records-table', id: 'records' },
      h('caption', null, t('Records')),
      h('thead', null, h('tr', null, [t('Record'), t('Holder'), t('Feat'), t('Against'), t('Game')].map((title) => h('th', { scope: 'col' }, title)))),
      h('tbody', null, records.map((record) => h('tr', { dataset: { record: record.record, level: record.level ?? '' } },
        h('th', { scope: 'row' }, RECORD_TITLES[record.record] || record.record,
          record.level ? ` (${levelName(record.level)})` : ''),
        h('td', null, playerLink(record.player)),
        h('td', { class: 'record-value' }, recordValue(record)),
        h('td', null, record.opponent || '—'),
        h('td', null, h('a', { href: `/games/${encodeURIComponent(record.game)}` }, t('View')))))))
    : h('p', { class: 'muted' }, t('No records yet: finish a rated game with a registered name.'));
  return h('section', { class: 'card', id: 'records-section' },
    h('h2', null, t('Records')),
    h('p', { class: 'muted' }, t('Feats of registered players in games that count on the scoreboard.')),
    body);
}

function notFound(root, name) {
  document.title = t('Player not found · Rookery');
  clear(root, h('section', { class: 'card narrow' },
    h('h1', null, t('Player not found')),
    h('p', null, t('Nobody is registered as “{name}”.', { name })),
    h('p', null, h('a', { href: '/scoreboard' }, t('See the scoreboard')))));
}

export async function playerPage(root, name) {
  document.title = `${name} · Rookery`;
  const [levels, profile] = await Promise.all([
    loadLevels(),
    api('GET', `/api/players/${encodeURIComponent(name)}`).catch((error) => error),
  ]);
  if (profile instanceof ApiError && profile.status === 404) {
    notFound(root, name);
    return;
  }
  if (profile instanceof Error) throw profile;
  document.title = `${profile.name} · Rookery`;

  const stat = (label, value, id) => h('div', null, h('dt', null, label), h('dd', { id }, String(value)));
  const games = h('div', { class: 'player-games', id: 'player-games', 'aria-live': 'polite' });
  const more = h('button', { type: 'button', id: 'older-games', hidden: true }, t('Older games'));
  let cursor = null;
  const loadPage = async () => {
    more.disabled = true;
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (cursor) query.set('before', cursor);
    try {
      const page = await api('GET', `/api/players/${encodeURIComponent(profile.name)}/games?${query}`);
      if (!cursor && !page.games.length) games.append(h('p', { class: 'muted' }, t('No games yet.')));
      else games.append(gameList(page.games, levels));
      cursor = page.next;
      more.hidden = !cursor;
    } catch (error) {
      games.append(h('p', { class: 'form-error', role: 'alert' }, t('Games are unavailable: {reason}', { reason: error.message })));
    } finally {
      more.disabled = false;
    }
  };
  more.addEventListener('click', loadPage);

  clear(root, h('div', { class: 'player-page' },
    h('section', { class: 'card' },
      h('h1', null, profile.name,
        h('span', { class: 'rating-badge', id: 'player-rating', title: `Glicko-2 rating, deviation ${profile.rating_deviation}` },
          ratingText(profile.rating, profile.provisional))),
      profile.provisional
        ? h('p', { class: 'muted', id: 'provisional-note' }, t('Provisional rating (deviation {deviation}): it settles after a few more rated games.', { deviation: profile.rating_deviation }))
        : h('p', { class: 'muted' }, t('Rating deviation {deviation}.', { deviation: profile.rating_deviation })),
      challengeSection(profile.name),
      relationSection(profile.name),
      h('dl', { class: 'color-score player-stats', 'aria-label': t('Results') },
        stat(t('Games'), profile.games, 'player-games-count'),
        stat(t('Wins'), profile.wins, 'player-wins'),
        stat(t('Losses'), profile.losses, 'player-losses'),
        stat(t('Draws'), profile.draws, 'player-draws'),
        stat(t('Win streak'), profile.win_streak, 'player-streak'),
        stat(t('Best streak'), profile.best_win_streak, 'player-best-streak'))),
    h('section', { class: 'card' },
      h('h2', null, t('Rating history')),
      ratingGraph(profile.history)),
    playerTeamsSection(profile.name),
    h('section', { class: 'card' },
      h('h2', null, t('Games')),
      games,
      more)));
  await loadPage();
}

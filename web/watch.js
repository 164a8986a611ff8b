// The watch page (/watch): live games (AI v AI first) and finished games to
// replay, refreshed every few seconds.

import { api, loadLevels } from './api.js';
import { h, clear } from './dom.js';
import { BoardView } from './board.js';
import { parseFen, splitUci } from './chess.js';
import { challengeButton } from './challenges.js';
import {
  gameDateText, matchLabel, movesText, ratedText, ratingText, resultShort, timeControlText,
} from './format.js';
import { t } from './i18n.js';

const REFRESH_MS = 3000;

const isAiVsAi = (game) => game.white && game.white.kind === 'ai' && game.black && game.black.kind === 'ai';

// AI v AI games first (they are made to be watched), newest first otherwise.
export function sortForWatching(games) {
  return games
    .map((game, index) => ({ game, index }))
    .sort((a, b) => Number(isAiVsAi(b.game)) - Number(isAiVsAi(a.game)) || a.index - b.index)
    .map(({ game }) => game);
}

export function gameList(games, levels, { empty = t('No games.'), boards = false } = {}) {
  if (!games.length) return h('p', { class: 'muted' }, empty);
  return h('ul', { class: boards ? 'game-cards' : 'game-list' }, games.map((game) => {
    const label = matchLabel(game, levels);
    const plies = game.moves.length;
    const variant = game.variant === 'chess960' ? t('Chess960 · ') : '';
    // Who, with their ratings; then the result, moves, time control,
    // rated or casual, and when.
    const rated = (color) => {
      const side = game[color];
      return side && side.kind === 'human' && side.name && typeof side.rating === 'number'
        ? ` (${ratingText(side.rating, side.provisional)})` : '';
    };
    const withRatings = `${label.replace(/ vs /, `${rated('white')} vs `)}${rated('black')}`;
    const details = `${variant}${resultShort(game)} · ${movesText(plies, game.initial_fen)} · ${timeControlText(game)} · ${ratedText(game)}`;
    const names = ['white', 'black'].map((color) => game[color]).filter((side) => side && side.kind === 'human' && side.name);
    let board = null;
    if (boards) {
      const view = new BoardView({ mini: true, label: `Position: ${label}` });
      const last = plies ? splitUci(game.moves[plies - 1]) : null;
      view.set({ position: parseFen(game.fen), lastMove: last ? [last.from, last.to] : null });
      board = view.el;
    }
    const challenges = names.map((side) => challengeButton(side.name, { label: `Challenge ${side.name}` })).filter(Boolean);
    return h('li', { class: 'game-item', dataset: { gameId: game.id } },
      h('a', { href: `/games/${encodeURIComponent(game.id)}`, class: 'game-link' },
        board,
        h('span', { class: 'game-label' }, withRatings),
        h('span', { class: 'game-details' }, details,
          game.created_at ? h('time', { class: 'game-date', datetime: new Date(game.created_at).toISOString() }, ` · ${gameDateText(game.created_at)}`) : null),
        isAiVsAi(game) ? h('span', { class: 'badge' }, t('AI v AI')) : null,
        // Only open seeks take anyone; a private game's seat needs its invite.
        game.joinable ? h('span', { class: 'badge join' }, t('Join')) : null),
      challenges.length ? h('div', { class: 'game-challenges' }, challenges) : null);
  }));
}

export async function watchPage(root) {
  document.title = t('Watch · Rookery');
  const levels = await loadLevels();
  const live = h('div', { class: 'game-list-holder', id: 'live-games', 'aria-live': 'polite', 'aria-busy': 'true' });
  const finished = h('div', { class: 'game-list-holder', id: 'finished-games' });
  clear(root, h('div', { class: 'watch' },
    h('section', { class: 'card' }, h('h1', null, t('Live games')), live),
    h('section', { class: 'card' }, h('h2', null, t('Finished games')), h('p', { class: 'muted' }, t('Open one to replay it move by move.')), finished)));

  const refresh = async () => {
    const [active, done] = await Promise.allSettled([
      api('GET', '/api/games?status=active&limit=30'),
      api('GET', '/api/games?status=finished&limit=30'),
    ]);
    live.setAttribute('aria-busy', 'false');
    if (active.status === 'fulfilled') {
      clear(live, gameList(sortForWatching(active.value.games), levels, { empty: t('No games in progress right now.'), boards: true }));
    } else {
      clear(live, h('p', { class: 'muted' }, t('Live games are unavailable right now.')));
    }
    if (done.status === 'fulfilled') clear(finished, gameList(done.value.games, levels, { empty: t('No finished games yet.') }));
  };
  await refresh();
  setInterval(refresh, REFRESH_MS);
}

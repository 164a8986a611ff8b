// The scoreboard page (/scoreboard) from GET /api/scoreboard.

import { api, loadLevels } from './api.js';
import { h, clear } from './dom.js';
import { levelLabel, ratingText } from './format.js';
import { playerLink, recordsSection } from './player.js';
import { t } from './i18n.js';

export async function scoreboardPage(root) {
  document.title = t('Scoreboard · Rookery');
  const [levels, board] = await Promise.all([loadLevels(), api('GET', '/api/scoreboard').catch((error) => error)]);
  if (board instanceof Error) {
    clear(root, h('section', { class: 'card narrow' }, h('h1', null, t('Scoreboard')), h('p', null, t('The scoreboard is unavailable: {reason}', { reason: board.message }))));
    return;
  }
  const colors = board.colors || { white: 0, black: 0, draws: 0 };
  const casual = board.casual || { white: 0, black: 0, draws: 0 };
  const table = (caption, headers, rows, empty) => (rows.length
    ? h('table', { class: 'score-table' },
      h('caption', null, caption),
      h('thead', null, h('tr', null, headers.map((header) => h('th', { scope: 'col' }, header)))),
      h('tbody', null, rows.map((cells) => h('tr', null, cells.map((cell, index) => (index === 0 ? h('th', { scope: 'row' }, cell) : h('td', null, String(cell))))))))
    : h('p', { class: 'muted' }, empty));

  clear(root, h('div', { class: 'scoreboard' },
    h('section', { class: 'card' },
      h('h1', null, t('Scoreboard')),
      h('dl', { class: 'color-score', 'aria-label': t('Results by colour') },
        h('div', null, h('dt', null, t('White wins')), h('dd', { id: 'score-white' }, String(colors.white))),
        h('div', null, h('dt', null, t('Draws')), h('dd', { id: 'score-draws' }, String(colors.draws))),
        h('div', null, h('dt', null, t('Black wins')), h('dd', { id: 'score-black' }, String(colors.black))))),
    h('section', { class: 'card' },
      h('h2', null, t('Players')),
      table(t('Registered players'), [t('Player'), t('Games'), t('Wins'), t('Losses'), t('Draws'), t('Rating')],
        (board.players || []).map((p) => [playerLink(p.name), p.games, p.wins, p.losses, p.draws, ratingText(p.rating, p.provisional)]),
        t('No registered player has finished a game yet. Pick a name in the lobby to appear here.'))),
    h('section', { class: 'card' },
      h('h2', null, t('Computer')),
      table(t('Results of the computer by level'), [t('Level'), t('Games'), t('Wins'), t('Losses'), t('Draws')],
        (board.ai || []).map((row) => [levelLabel(row.level, levels), row.games, row.wins, row.losses, row.draws]),
        t('The computer has not finished a game yet.'))),
    recordsSection(board.records, levels),
    h('section', { class: 'card' },
      h('h2', null, t('Casual games')),
      h('p', { class: 'muted', id: 'casual-note' }, t('These games count only here, not above:')),
      h('ul', { class: 'muted casual-reasons', 'aria-labelledby': 'casual-note' },
        h('li', null, t('games from a custom position (a FEN), or continued from an imported game;')),
        h('li', null, t('games with less than a minute on the clock;')),
        h('li', null, t('games in which the computer granted a takeback.'))),
      h('dl', { class: 'color-score', 'aria-label': t('Casual results by colour') },
        h('div', null, h('dt', null, t('White wins')), h('dd', { id: 'casual-white' }, String(casual.white))),
        h('div', null, h('dt', null, t('Draws')), h('dd', { id: 'casual-draws' }, String(casual.draws))),
        h('div', null, h('dt', null, t('Black wins')), h('dd', { id: 'casual-black' }, String(casual.black)))))));
}

// The scoreboard page (/scoreboard) from GET /api/scoreboard.

import { api, loadLevels } from './api.js';
import { h, clear } from './dom.js';
import { levelLabel, ratingText } from './format.js';
import { playerLink, recordsSection } from './player.js';

export async function scoreboardPage(root) {
  document.title = 'Scoreboard · Rookery';
  const [levels, board] = await Promise.all([loadLevels(), api('GET', '/api/scoreboard').catch((error) => error)]);
  if (board instanceof Error) {
    clear(root, h('section', { class: 'card narrow' }, h('h1', null, 'Scoreboard'), h('p', null, `The scoreboard is unavailable: ${board.message}`)));
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
      h('h1', null, 'Scoreboard'),
      h('dl', { class: 'color-score', 'aria-label': 'Results by colour' },
        h('div', null, h('dt', null, 'White wins'), h('dd', { id: 'score-white' }, String(colors.white))),
        h('div', null, h('dt', null, 'Draws'), h('dd', { id: 'score-draws' }, String(colors.draws))),
        h('div', null, h('dt', null, 'Black wins'), h('dd', { id: 'score-black' }, String(colors.black))))),
    h('section', { class: 'card' },
      h('h2', null, 'Players'),
      table('Registered players', ['Player', 'Games', 'Wins', 'Losses', 'Draws', 'Rating'],
        (board.players || []).map((p) => [playerLink(p.name), p.games, p.wins, p.losses, p.draws, ratingText(p.rating, p.provisional)]),
        'No registered player has finished a game yet. Pick a name in the lobby to appear here.')),
    h('section', { class: 'card' },
      h('h2', null, 'Computer'),
      table('Results of the computer by level', ['Level', 'Games', 'Wins', 'Losses', 'Draws'],
        (board.ai || []).map((row) => [levelLabel(row.level, levels), row.games, row.wins, row.losses, row.draws]),
        'The computer has not finished a game yet.')),
    recordsSection(board.records, levels),
    h('section', { class: 'card' },
      h('h2', null, 'Casual games'),
      h('p', { class: 'muted', id: 'casual-note' }, 'These games count only here, not above:'),
      h('ul', { class: 'muted casual-reasons', 'aria-labelledby': 'casual-note' },
        h('li', null, 'games from a custom position (a FEN), or continued from an imported game;'),
        h('li', null, 'games with less than a minute on the clock;'),
        h('li', null, 'games in which the computer granted a takeback.')),
      h('dl', { class: 'color-score', 'aria-label': 'Casual results by colour' },
        h('div', null, h('dt', null, 'White wins'), h('dd', { id: 'casual-white' }, String(casual.white))),
        h('div', null, h('dt', null, 'Draws'), h('dd', { id: 'casual-draws' }, String(casual.draws))),
        h('div', null, h('dt', null, 'Black wins'), h('dd', { id: 'casual-black' }, String(casual.black)))))));
}

// Import a PGN (pasted or from a file): the server reads it (POST /api/pgn);
// a file of several games gets a list to pick one from (the server answers
// `games`, and reads the picked one given its `index`); the card replays it
// on a board, or continues it against the computer or a friend. A continued
// game keeps the whole imported history: POST /api/games
// gets the imported start (`fen`, left out for the standard one) and every
// imported move (`moves`, UCI), so the new game's move list, PGN and
// analysis begin where the imported game began.

import { api, createGame, loadLevels } from './api.js';
import { h, clear } from './dom.js';
import { BoardView } from './board.js';
import { isStandardStart, positionsOf, splitUci } from './chess.js';
import { capitalize, levelLabel, moveLabel, movesText, opposite } from './format.js';
import { t } from './i18n.js';

const DEFAULT_LEVEL = 3;

export function importCard() {
  const text = h('textarea', { id: 'pgn-text', rows: '4', 'aria-label': t('PGN text'), placeholder: t('1. e4 e5 2. Nf3 …') });
  const file = h('input', { type: 'file', accept: '.pgn,text/plain', 'aria-label': t('PGN file') });
  const error = h('p', { class: 'form-error', role: 'alert' });
  const result = h('div', { class: 'import-result' });
  file.addEventListener('change', async () => {
    const chosen = file.files && file.files[0];
    if (chosen) text.value = await chosen.text();
  });
  const read = h('button', { type: 'button', class: 'primary' }, t('Import'));
  // The text read last, and the game of it shown: a pick re-reads that text.
  let pasted = '';
  let reading = 0; // only the last read's answer is shown
  const preview = h('div', { class: 'import-preview' });
  // `fresh`: a new text (the list of its games is made again); else a pick
  // from the list, which stays.
  const load = async (index, fresh) => {
    error.textContent = '';
    if (fresh) clear(result);
    const mine = ++reading;
    try {
      const body = { pgn: pasted };
      if (index > 0) body.index = index;
      const game = await api('POST', '/api/pgn', { body });
      const levels = await loadLevels();
      if (mine !== reading) return;
      if (fresh) clear(result, game.games ? gamePicker(game, (picked) => load(picked, false)) : null, preview);
      showImported(preview, game, error, levels);
    } catch (failure) {
      if (mine !== reading) return;
      error.textContent = failure.message;
    }
  };
  read.addEventListener('click', () => {
    pasted = text.value;
    load(0, true);
  });
  return h('section', { class: 'card import' }, h('h2', null, t('Import a PGN')),
    text, h('div', { class: 'actions import-actions' }, file, read), error, result);
}

// A White or Black tag worth showing: PGN writes "?" for an unknown name.
function tagName(value) {
  const name = typeof value === 'string' ? value.trim() : '';
  return name && name !== '?' ? name : null;
}

// "alice v bob · 5 moves · 1-0", from the PGN's tags.
function importedTitle(game) {
  const white = tagName(game.white);
  const black = tagName(game.black);
  const players = white || black ? `${white || 'Unknown'} v ${black || 'Unknown'}` : t('Imported game');
  const result = game.result && game.result !== '*' ? game.result : 'unfinished';
  return `${players} · ${movesText(game.moves.length, game.initial_fen)} · ${result}`;
}

// The games of a file of several: a list to pick the one to replay or
// continue (the first is shown until another is picked).
function gamePicker(game, load) {
  const select = h('select', { id: 'pgn-game', name: 'pgn-game' },
    game.games.map((entry) => h('option', { value: String(entry.index), selected: entry.index === game.index },
      listedTitle(entry))));
  select.addEventListener('change', () => load(Number(select.value)));
  const notes = [];
  if (game.more) notes.push(`Only the first ${game.games.length} games of the file are listed.`);
  if (game.unreadable) notes.push(`The rest of the file could not be read (${game.unreadable}).`);
  return h('div', { class: 'import-games' },
    h('label', { class: 'field' }, h('span', null, t('Game ({count} in the file)', { count: game.games.length })), select),
    notes.length ? h('p', { class: 'muted' }, notes.join(' ')) : null);
}

// "2. alice v bob · 2026.11.01 · 7 plies · 1-0", for the pick list.
function listedTitle(entry) {
  const white = tagName(entry.white);
  const black = tagName(entry.black);
  const players = white || black ? `${white || 'Unknown'} v ${black || 'Unknown'}` : t('Unnamed game');
  const date = typeof entry.date === 'string' && !entry.date.includes('?') ? ` · ${entry.date}` : '';
  const result = entry.result && entry.result !== '*' ? entry.result : 'unfinished';
  return `${entry.index + 1}. ${players}${date} · ${entry.moves} ${entry.moves === 1 ? 'ply' : 'plies'} · ${result}`;
}

function showImported(root, game, error, levels) {
  const positions = positionsOf(game.initial_fen, game.moves);
  let ply = game.moves.length;
  const board = new BoardView({ onMove: () => {}, label: t('Imported game board') });
  const label = h('p', { class: 'import-ply', role: 'status' });
  const draw = () => {
    const last = ply > 0 ? splitUci(game.moves[ply - 1]) : null;
    board.set({ position: positions[ply], dests: new Map(), lastMove: last ? [last.from, last.to] : null, check: null, orientation: 'white' });
    label.textContent = ply === 0 ? t('Start position') : `After ${moveLabel(game.initial_fen, ply, game.san[ply - 1])}`;
  };
  const step = (delta) => {
    ply = Math.max(0, Math.min(game.moves.length, ply + delta));
    draw();
  };
  clear(root,
    h('p', { class: 'import-title' }, importedTitle(game)),
    h('div', { class: 'import-board' }, board.el),
    label,
    h('nav', { class: 'replay-nav', 'aria-label': t('Imported game navigation') },
      h('button', { type: 'button', 'aria-label': t('Previous imported move'), onclick: () => step(-1) }, '◀'),
      h('button', { type: 'button', 'aria-label': t('Next imported move'), onclick: () => step(1) }, '▶')),
    game.over
      ? h('p', { class: 'muted' }, t('This game is over: it can be replayed, not continued.'))
      : continueForm(game, positions[positions.length - 1].turn, error, levels));
  draw();
}

// Side and level for continuing: the side to move and level 3 unless the
// person picks others.
function continueForm(game, turn, error, levels) {
  const radio = (color) => h('label', { class: 'choice' },
    h('input', { type: 'radio', name: 'import-side', value: color, checked: color === turn }), h('span', null, capitalize(color)));
  const numbers = levels.length ? levels.map((entry) => entry.level) : [1, 2, 3, 4, 5, 6, 7, 8];
  const level = h('select', { id: 'import-level', name: 'import-level' },
    numbers.map((n) => h('option', { value: String(n), selected: n === DEFAULT_LEVEL }, levelLabel(n, levels))));
  const vsComputer = h('button', { type: 'button', class: 'primary' });
  const vsFriend = h('button', { type: 'button' }, t('Continue with a friend'));
  const form = h('div', { class: 'import-continue' },
    h('fieldset', { class: 'segmented' }, h('legend', null, t('You play')), radio('white'), radio('black')),
    h('label', { class: 'field' }, h('span', null, t('Computer level')), level),
    h('div', { class: 'actions' }, vsComputer, vsFriend));
  const side = () => form.querySelector('input[name="import-side"]:checked').value;
  const sync = () => { vsComputer.textContent = t('Continue as {side, select, white {white} other {black}} v computer', { side: side() }); };
  form.addEventListener('change', sync);
  sync();

  const history = { moves: game.moves };
  if (!isStandardStart(game.initial_fen) || game.variant === 'chess960') history.fen = game.initial_fen;
  // A Chess960 game (its PGN's Variant tag) goes on as one.
  if (game.variant === 'chess960') history.variant = 'chess960';
  const start = async (button, body) => {
    error.textContent = '';
    button.disabled = true;
    try {
      const id = await createGame({ ...body, ...history });
      window.location.assign(`/games/${encodeURIComponent(id)}`);
    } catch (failure) {
      button.disabled = false;
      error.textContent = t('Could not continue the game: {reason}', { reason: failure.message });
    }
  };
  vsComputer.addEventListener('click', () => {
    const me = side();
    start(vsComputer, { [me]: { kind: 'human' }, [opposite(me)]: { kind: 'ai', level: Number(level.value) }, as: me });
  });
  vsFriend.addEventListener('click', () => {
    start(vsFriend, { white: { kind: 'human' }, black: { kind: 'human' }, as: side(), visibility: 'private' });
  });
  return form;
}

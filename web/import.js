// Import a PGN (pasted or from a file): the server reads it (POST /api/pgn);
// the card replays it on a board, or continues it from its last position
// against the computer or a friend (POST /api/games with "pgn").

import { api, createGame } from './api.js';
import { h, clear } from './dom.js';
import { BoardView } from './board.js';
import { positionsOf, splitUci } from './chess.js';

export function importCard() {
  const text = h('textarea', { id: 'pgn-text', rows: '4', 'aria-label': 'PGN text', placeholder: '1. e4 e5 2. Nf3 …' });
  const file = h('input', { type: 'file', accept: '.pgn,text/plain', 'aria-label': 'PGN file' });
  const error = h('p', { class: 'form-error', role: 'alert' });
  const result = h('div', { class: 'import-result' });
  file.addEventListener('change', async () => {
    const chosen = file.files && file.files[0];
    if (chosen) text.value = await chosen.text();
  });
  const read = h('button', { type: 'button', class: 'primary' }, 'Import');
  read.addEventListener('click', async () => {
    error.textContent = '';
    clear(result);
    try {
      const game = await api('POST', '/api/pgn', { body: { pgn: text.value } });
      showImported(result, game, text.value, error);
    } catch (failure) {
      error.textContent = failure.message;
    }
  });
  return h('section', { class: 'card import' }, h('h2', null, 'Import a PGN'),
    text, h('div', { class: 'actions' }, file, read), error, result);
}

function showImported(root, game, pgn, error) {
  const positions = positionsOf(game.initial_fen, game.moves);
  let ply = game.moves.length;
  const board = new BoardView({ onMove: () => {}, label: 'Imported game board' });
  const label = h('p', { class: 'import-ply', role: 'status' });
  const draw = () => {
    const last = ply > 0 ? splitUci(game.moves[ply - 1]) : null;
    board.set({ position: positions[ply], dests: new Map(), lastMove: last ? [last.from, last.to] : null, check: null, orientation: 'white' });
    label.textContent = ply === 0 ? 'Start position' : `After ${ply} of ${game.moves.length}: ${game.san[ply - 1]}`;
  };
  const step = (delta) => {
    ply = Math.max(0, Math.min(game.moves.length, ply + delta));
    draw();
  };
  const turn = positions[positions.length - 1].turn;
  const other = turn === 'white' ? 'black' : 'white';
  const start = async (body) => {
    try {
      const id = await createGame({ ...body, pgn });
      window.location.assign(`/games/${encodeURIComponent(id)}`);
    } catch (failure) {
      error.textContent = failure.message;
    }
  };
  const vsComputer = h('button', { type: 'button', onclick: () => start({ [turn]: { kind: 'human' }, [other]: { kind: 'ai', level: 3 } }) }, `Continue as ${turn} v computer`);
  const vsFriend = h('button', { type: 'button', onclick: () => start({ white: { kind: 'human' }, black: { kind: 'human' }, as: turn, visibility: 'private' }) }, 'Continue with a friend');
  clear(root,
    h('p', null, `${game.white || '?'} v ${game.black || '?'} · ${game.moves.length} moves · ${game.result || '*'}`),
    h('div', { class: 'import-board' }, board.el),
    label,
    h('nav', { class: 'replay-nav', 'aria-label': 'Imported game navigation' },
      h('button', { type: 'button', 'aria-label': 'Previous imported move', onclick: () => step(-1) }, '◀'),
      h('button', { type: 'button', 'aria-label': 'Next imported move', onclick: () => step(1) }, '▶')),
    game.over ? h('p', { class: 'muted' }, 'This game is over: it can be replayed, not continued.') : h('div', { class: 'actions' }, vsComputer, vsFriend));
  draw();
}

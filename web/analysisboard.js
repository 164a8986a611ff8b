// The analysis board (/analysis, issue 36): any position, from a FEN, a
// PGN or the board editor (editor.js), with moves played on it, and the
// engine's evaluation and line computed by the server (POST /api/analysis,
// within the server's analysis limits); then "continue from here" against
// the computer or a friend (POST /api/games with the position's FEN). The
// rules are the server's too: every position is read by POST /api/position
// (legal moves, SAN, the end of the game), so the page never guesses.
// `?fen=FEN` (and `&moves=e2e4,e7e5`, `&variant=chess960`) opens a position.

import { api, createGame, loadLevels } from './api.js';
import { h, clear } from './dom.js';
import { BoardView, destsOf } from './board.js';
import { START_FEN, kingSquare, parseFen, splitUci } from './chess.js';
import { BoardEditor } from './editor.js';
import { evalSentence } from './analysis.js';
import { levelLabel } from './format.js';
import { t } from './i18n.js';

const EVAL_DEBOUNCE_MS = 250;
const DEFAULT_LEVEL = 3;

export async function analysisBoardPage(root) {
  document.title = t('Analysis board · Rookery');
  const params = new URLSearchParams(window.location.search);
  const page = new AnalysisBoard(root, await loadLevels().catch(() => []));
  await page.open({
    fen: params.get('fen') || START_FEN,
    moves: (params.get('moves') || '').split(',').map((uci) => uci.trim()).filter(Boolean),
    variant: params.get('variant') === 'chess960' ? 'chess960' : 'standard',
  });
}

// Castling rights naming rook files (Shredder-FEN) mean Chess960 castling.
const isChess960Fen = (fen) => /[A-Ha-h]/.test(((String(fen).trim().split(/\s+/)[2]) || '-').replace(/[KQkq-]/g, ''));

class AnalysisBoard {
  constructor(root, levels) {
    this.levels = levels;
    this.start = { fen: START_FEN, variant: 'standard' };
    this.moves = [];
    this.info = null; // the server's answer for the whole line
    this.ply = 0;
    this.orientation = 'white';
    this.evaluating = null;
    this.evalTimer = null;

    this.board = new BoardView({ onMove: (uci) => this.play(uci), label: t('Analysis board') });
    this.editor = null;
    this.error = h('p', { class: 'form-error', role: 'alert' });
    this.statusEl = h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
    this.movesEl = h('ol', { class: 'moves', 'aria-label': t('Moves') });
    this.movesEl.addEventListener('click', (event) => {
      const button = event.target instanceof Element ? event.target.closest('[data-ply]') : null;
      if (button) this.goTo(Number(button.dataset.ply));
    });
    this.nav = {
      first: h('button', { type: 'button', 'aria-label': t('First position'), onclick: () => this.goTo(0) }, '⏮'),
      prev: h('button', { type: 'button', 'aria-label': t('Previous move'), onclick: () => this.goTo(this.ply - 1) }, '◀'),
      next: h('button', { type: 'button', 'aria-label': t('Next move'), onclick: () => this.goTo(this.ply + 1) }, '▶'),
      last: h('button', { type: 'button', 'aria-label': t('Last move'), onclick: () => this.goTo(this.moves.length) }, '⏭'),
    };

    // The engine.
    this.engineBox = h('input', { type: 'checkbox', id: 'engine-on', checked: true });
    this.engineBox.addEventListener('change', () => this.evaluate());
    this.evalEl = h('p', { class: 'board-eval', id: 'board-eval', 'aria-live': 'polite' });
    this.lineEl = h('p', { class: 'board-line' });
    this.depthEl = h('p', { class: 'muted board-depth' });

    // Loading a position.
    this.fenInput = h('input', { type: 'text', id: 'fen-input', class: 'fen-input', spellcheck: 'false', autocomplete: 'off' });
    this.pgnInput = h('textarea', { id: 'pgn-input', rows: '3', placeholder: t('1. e4 e5 2. Nf3 …') });

    // Continue from here.
    this.opponent = h('select', { id: 'continue-opponent' },
      [1, 2, 3, 4, 5, 6, 7, 8].map((level) => h('option', { value: `ai:${level}`, selected: level === DEFAULT_LEVEL }, t('The computer: {level}', { level: levelLabel(level, levels) }))),
      h('option', { value: 'friend' }, t('A friend (invite link)')));
    this.side = h('select', { id: 'continue-side' }, h('option', { value: 'white' }, t('White')), h('option', { value: 'black' }, t('Black')));
    this.continueButton = h('button', { type: 'button', class: 'primary', id: 'continue-button', onclick: () => this.continueGame() }, t('Play from here'));
    this.continueError = h('p', { class: 'form-error', role: 'alert' });

    this.editButton = h('button', { type: 'button', id: 'edit-button', onclick: () => this.edit() }, t('Set up a position'));
    this.doneButton = h('button', { type: 'button', class: 'primary', id: 'edit-done', onclick: () => this.doneEditing() }, t('Analyse this position'));
    this.editorFen = h('p', { class: 'editor-fen muted' });
    this.editHolder = h('section', { class: 'card editor-card', hidden: true, 'aria-labelledby': 'editor-title' });
    this.analyseHolder = h('div', { class: 'analyse-holder' });

    const flip = h('button', { type: 'button', onclick: () => this.flip() }, t('Flip board'));
    this.boardHolder = h('div', { class: 'board-holder' }, this.board.el);
    clear(root, h('section', { class: 'analysis-board-page game-page' },
      h('div', { class: 'board-area' }, this.boardHolder),
      h('aside', { class: 'panel' },
        h('h1', { class: 'game-title' }, t('Analysis board')),
        this.error,
        this.editHolder,
        h('div', { class: 'analyse-mode' },
          this.statusEl,
          h('section', { class: 'board-engine', 'aria-labelledby': 'engine-title' },
            h('div', { class: 'engine-head' },
              h('h2', { id: 'engine-title' }, t('Engine')),
              h('label', { class: 'checkbox' }, this.engineBox, h('span', null, t('Evaluate')))),
            this.evalEl, this.lineEl, this.depthEl),
          h('div', { class: 'moves-box' }, this.movesEl),
          h('nav', { class: 'replay-nav', 'aria-label': t('Move navigation') }, Object.values(this.nav)),
          h('div', { class: 'actions' }, this.editButton, flip),
          h('details', { class: 'board-load' },
            h('summary', null, t('Load a FEN or a PGN')),
            h('label', { for: 'fen-input' }, 'FEN'),
            h('div', { class: 'invite-row' }, this.fenInput, h('button', { type: 'button', onclick: () => this.loadFen() }, t('Load FEN'))),
            h('label', { for: 'pgn-input' }, 'PGN'),
            this.pgnInput,
            h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => this.loadPgn() }, t('Load PGN')))),
          h('section', { class: 'board-continue', 'aria-labelledby': 'continue-title' },
            h('h2', { id: 'continue-title' }, t('Continue from here')),
            h('div', { class: 'continue-row' },
              h('label', { for: 'continue-opponent' }, t('Against')), this.opponent,
              h('label', { for: 'continue-side' }, t('You play')), this.side),
            h('div', { class: 'actions' }, this.continueButton),
            this.continueError)))));
  }

  // A start and moves: read by the server, then shown at the last move.
  async open({ fen, moves = [], variant = 'standard' }) {
    const chess960 = variant === 'chess960' || isChess960Fen(fen);
    const start = { fen, variant: chess960 ? 'chess960' : 'standard' };
    const info = await this.read(start, moves);
    if (!info) return false;
    this.start = start;
    this.moves = info.moves;
    this.info = info;
    this.ply = info.moves.length;
    this.render();
    return true;
  }

  // POST /api/position; a refusal is said in the server's words.
  async read(start, moves) {
    const body = { moves };
    if (start.fen !== START_FEN) body.fen = start.fen;
    if (start.variant === 'chess960') body.variant = 'chess960';
    try {
      const info = await api('POST', '/api/position', { body });
      this.error.textContent = '';
      return info;
    } catch (error) {
      this.error.textContent = t('That position cannot be analysed: {reason}', { reason: error.message });
      return null;
    }
  }

  async play(uci) {
    const moves = [...this.moves.slice(0, this.ply), uci];
    const info = await this.read(this.start, moves);
    if (!info) return;
    this.moves = info.moves;
    this.info = info;
    this.ply = moves.length;
    this.render();
  }

  goTo(ply) {
    const target = Math.max(0, Math.min(this.moves.length, ply));
    if (target === this.ply) return;
    this.ply = target;
    this.render();
  }

  flip() {
    this.orientation = this.orientation === 'white' ? 'black' : 'white';
    if (this.editor) this.editor.setOrientation(this.orientation);
    this.render();
  }

  // The position after `ply` moves: the client replays for display only
  // (chess.js); its legal moves are the server's, for the last position,
  // or read again for an earlier one.
  async positionInfo() {
    if (this.ply === this.moves.length) return this.info;
    return this.read(this.start, this.moves.slice(0, this.ply));
  }

  async render() {
    const ply = this.ply;
    const info = await this.positionInfo();
    if (!info || ply !== this.ply) return;
    this.current = info;
    const position = parseFen(info.fen);
    const last = ply > 0 ? splitUci(this.moves[ply - 1]) : null;
    this.board.set({
      position,
      dests: destsOf(info.legal_moves),
      lastMove: last ? [last.from, last.to] : null,
      check: info.check ? kingSquare(position.board, info.turn) : null,
      orientation: this.orientation,
    });
    this.fenInput.value = info.fen;
    let status = t('{side, select, white {White} other {Black}} to play{check, select, yes {, in check} other {}}.', { side: info.turn, check: info.check ? 'yes' : 'no' });
    if (info.outcome) {
      status = t('Game over: {result} ({termination, select, checkmate {checkmate} stalemate {stalemate} insufficient_material {insufficient material} threefold_repetition {threefold repetition} fifty_moves {the fifty-move rule} other {{termination}}}).', info.outcome);
    }
    this.statusEl.textContent = status;
    this.continueButton.disabled = !!info.outcome;
    this.renderMoves();
    this.nav.first.disabled = ply === 0;
    this.nav.prev.disabled = ply === 0;
    this.nav.next.disabled = ply === this.moves.length;
    this.nav.last.disabled = ply === this.moves.length;
    this.evaluate();
  }

  renderMoves() {
    const san = this.info ? this.info.san : [];
    const blackFirst = parseFen(this.start.fen).turn === 'black';
    const items = [];
    san.forEach((text, index) => {
      const number = Math.floor((index + (blackFirst ? 1 : 0)) / 2) + 1;
      const white = (index + (blackFirst ? 1 : 0)) % 2 === 0;
      const label = white ? `${number}. ${text}` : (index === 0 ? `${number}… ${text}` : text);
      items.push(h('li', null, h('button', {
        type: 'button', class: `move${index + 1 === this.ply ? ' current' : ''}`, dataset: { ply: String(index + 1) },
      }, label)));
    });
    clear(this.movesEl, items.length ? items : h('li', { class: 'no-moves' }, t('Play a move on the board.')));
  }

  // The engine's view of the position shown: asked after a short pause
  // (a quick walk through the moves asks once), the previous question
  // dropped (its request aborted, which stops its search on the server).
  evaluate() {
    clearTimeout(this.evalTimer);
    if (this.evaluating) this.evaluating.abort();
    this.evaluating = null;
    const info = this.current;
    if (!this.engineBox.checked || !info) {
      this.evalEl.textContent = this.engineBox.checked ? '' : t('The engine is off.');
      this.lineEl.textContent = '';
      this.depthEl.textContent = '';
      return;
    }
    this.evalEl.textContent = t('Thinking…');
    this.evalTimer = setTimeout(async () => {
      const controller = new AbortController();
      this.evaluating = controller;
      const body = { moves: this.moves.slice(0, this.ply) };
      if (this.start.fen !== START_FEN) body.fen = this.start.fen;
      if (this.start.variant === 'chess960') body.variant = 'chess960';
      try {
        const response = await fetch('/api/analysis', {
          method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body), signal: controller.signal,
        });
        const answer = await response.json();
        if (this.evaluating !== controller) return;
        this.evaluating = null;
        if (!response.ok) {
          this.evalEl.textContent = answer && answer.error ? answer.error.message : t('The engine could not answer.');
          return;
        }
        this.showEval(answer, info);
      } catch (error) {
        if (error.name !== 'AbortError' && this.evaluating === controller) this.evalEl.textContent = t('The engine could not answer.');
      }
    }, EVAL_DEBOUNCE_MS);
  }

  showEval(answer, info) {
    this.evalEl.textContent = evalSentence(answer, info.turn);
    this.evalEl.dataset.cp = answer.cp ?? '';
    this.evalEl.dataset.mate = answer.mate ?? '';
    const blackToMove = info.turn === 'black';
    const fullmove = Number(info.fen.split(' ')[5]) || 1;
    const words = answer.line_san.map((san, index) => {
      const white = (index + (blackToMove ? 1 : 0)) % 2 === 0;
      const number = fullmove + Math.floor((index + (blackToMove ? 1 : 0)) / 2);
      if (white) return `${number}. ${san}`;
      return index === 0 ? `${number}… ${san}` : san;
    });
    this.lineEl.textContent = words.length ? t('Best line: {line}', { line: words.join(' ') }) : '';
    this.lineEl.dataset.best = answer.best || '';
    this.depthEl.textContent = t('Depth {depth}, {nodes} nodes.', { depth: answer.depth, nodes: answer.nodes });
  }

  loadFen() {
    const fen = this.fenInput.value.trim();
    if (fen) this.open({ fen });
  }

  async loadPgn() {
    const pgn = this.pgnInput.value.trim();
    if (!pgn) return;
    try {
      const game = await api('POST', '/api/pgn', { body: { pgn } });
      await this.open({ fen: game.initial_fen, moves: game.moves, variant: game.variant });
    } catch (error) {
      this.error.textContent = t('That PGN cannot be read: {reason}', { reason: error.message });
    }
  }

  // The board editor, from the position shown.
  edit() {
    const fen = this.current ? this.current.fen : this.start.fen;
    this.editor = new BoardEditor({ fen, onChange: (text) => { this.editorFen.textContent = text; } });
    this.editor.setOrientation(this.orientation);
    clear(this.boardHolder, this.editor.board.el);
    clear(this.editHolder,
      h('h2', { id: 'editor-title' }, t('Set up a position')),
      h('p', { class: 'muted' }, t('Pick a piece, then click squares (or drag it onto the board). Drag a piece off the board to remove it.')),
      this.editor.el,
      this.editorFen,
      h('div', { class: 'actions' }, this.doneButton,
        h('button', { type: 'button', onclick: () => this.stopEditing() }, t('Cancel'))));
    this.editorFen.textContent = this.editor.fen();
    this.editHolder.hidden = false;
    this.el().classList.add('editing');
  }

  el() {
    return this.boardHolder.closest('.analysis-board-page');
  }

  async doneEditing() {
    const fen = this.editor.fen();
    const ok = await this.open({ fen, variant: this.editor.chess960 ? 'chess960' : 'standard' });
    if (ok) this.stopEditing();
  }

  stopEditing() {
    this.editor = null;
    this.editHolder.hidden = true;
    clear(this.editHolder);
    clear(this.boardHolder, this.board.el);
    this.el().classList.remove('editing');
    this.render();
  }

  // A new game from the position shown: the server's engine checks the
  // position again when the game is made (docs/API.md, POST /api/games).
  async continueGame() {
    const info = this.current;
    if (!info) return;
    this.continueError.textContent = '';
    const mine = this.side.value;
    const other = mine === 'white' ? 'black' : 'white';
    const body = { fen: info.fen, as: mine };
    if (this.start.variant === 'chess960') body.variant = 'chess960';
    if (this.opponent.value === 'friend') {
      body.white = { kind: 'human' };
      body.black = { kind: 'human' };
      body.visibility = 'private';
    } else {
      body[mine] = { kind: 'human' };
      body[other] = { kind: 'ai', level: Number(this.opponent.value.slice(3)) };
    }
    this.continueButton.disabled = true;
    try {
      const id = await createGame(body);
      window.location.assign(`/games/${encodeURIComponent(id)}`);
    } catch (error) {
      this.continueButton.disabled = false;
      this.continueError.textContent = t('Could not start the game: {reason}', { reason: error.message });
    }
  }
}

// After the game: the engine's analysis of a finished game (evaluation
// graph, marks on the move list, average centipawn loss, progress while the
// server works), copy FEN / copy PGN, and what each piece on the board is.
// The game page creates one AnalysisPanel and calls render(ply) after each
// of its own renders; everything shown comes from the server's answers.

import { api } from './api.js';
import { h, clear } from './dom.js';
import { ROLE_NAMES, parseFen, placement, splitUci, fileOf } from './chess.js';
import { t } from './i18n.js';

const POLL_MS = 1000;
const MARKS = { inaccuracy: '?!', mistake: '?', blunder: '??' };
const SVG = 'http://www.w3.org/2000/svg';
// Each drawing of the graph gets fresh ids for its clip paths.
let graphCount = 0;

function svg(tag, attrs) {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  return el;
}

// A position's evaluation as White's winning chances, -1 (Black wins) to 1
// (White wins), for the graph: the scale lichess draws and the contract's
// judgements use (docs/API.md), on which a pawn counts for more in a level
// game than at +8, so the graph shows the swings that decided the game.
function whiteChances(position, turn) {
  if (position.mate === null || position.mate === undefined) return 2 / (1 + Math.exp(-0.00368208 * (position.cp || 0))) - 1;
  if (position.mate === 0) return turn === 'white' ? -1 : 1;
  return position.mate > 0 ? 1 : -1;
}

export function evalText(position) {
  if (position.mate !== null && position.mate !== undefined) return position.mate === 0 ? 'mate' : `#${position.mate}`;
  const pawns = (position.cp || 0) / 100;
  return `${pawns > 0 ? '+' : ''}${pawns.toFixed(2)}`;
}

// The evaluation in words: who mates and in how many, or the pawns.
// `turn` is the side to move in the position (the mated side at mate 0).
export function evalSentence(position, turn) {
  const mate = position.mate;
  if (mate === null || mate === undefined) return t('Evaluation {value}.', { value: evalText(position) });
  if (mate === 0) return t('Checkmate: {winner, select, white {White} other {Black}} has won.', { winner: turn === 'white' ? 'black' : 'white' });
  return t('Mate in {count} for {side, select, white {White} other {Black}}.', { count: Math.abs(mate), side: mate > 0 ? 'white' : 'black' });
}

// How many times the piece on each square has moved, after `ply` moves.
export function moveCounts(initialFen, moves, ply) {
  const start = parseFen(initialFen);
  const counts = new Map([...start.board.keys()].map((square) => [square, 0]));
  const board = new Map(start.board);
  for (const uci of moves.slice(0, ply)) {
    const { from, to } = splitUci(uci);
    const piece = board.get(from);
    const moved = (counts.get(from) || 0) + 1;
    if (piece && piece[1] === 'P' && fileOf(from) !== fileOf(to) && !board.has(to)) {
      const passed = to[0] + from[1];
      board.delete(passed);
      counts.delete(passed);
    }
    if (piece && piece[1] === 'K' && Math.abs(fileOf(to) - fileOf(from)) === 2) {
      const kingSide = fileOf(to) > fileOf(from);
      const rookFrom = (kingSide ? 'h' : 'a') + from[1];
      const rookTo = (kingSide ? 'f' : 'd') + from[1];
      counts.set(rookTo, (counts.get(rookFrom) || 0) + 1);
      counts.delete(rookFrom);
      board.set(rookTo, board.get(rookFrom));
      board.delete(rookFrom);
    }
    board.delete(from);
    counts.delete(from);
    board.set(to, piece);
    counts.set(to, moved);
  }
  return counts;
}

// A history position's FEN: placement and side to move exact; castling and
// en passant rights are not tracked by the client, so written as none.
function placementFen(position, ply) {
  return `${placement(position.board)} ${position.turn === 'white' ? 'w' : 'b'} - - 0 ${Math.floor(ply / 2) + 1}`;
}

export class AnalysisPanel {
  constructor(view) {
    this.view = view;
    this.data = null;
    this.timer = null;
    this.button = h('button', {
      type: 'button', class: 'primary', title: t('Ask the engine to evaluate every position of this game.'), onclick: () => this.start(),
    }, t('Analyse with the engine'));
    this.progress = h('progress', { class: 'analysis-progress', max: '1', value: '0', hidden: true, 'aria-label': t('Analysis progress') });
    this.statusEl = h('p', { class: 'analysis-status', role: 'status', 'aria-live': 'polite' });
    this.acplEl = h('p', { class: 'acpl' });
    this.graphEl = h('div', { class: 'eval-graph' });
    this.adviceEl = h('p', { class: 'advice' });
    this.copyFen = h('button', { type: 'button', onclick: () => this.copy('fen', this.copyFen) }, t('Copy FEN'));
    this.copyPgn = h('button', { type: 'button', onclick: () => this.copy('pgn', this.copyPgn) }, t('Copy PGN'));
    // The copy buttons go in the page's row of actions (gameview.js).
    this.el = h('div', { class: 'analysis-box', hidden: true },
      h('h2', null, t('Analysis')), this.button, this.progress, this.statusEl, this.graphEl, this.acplEl, this.adviceEl);
    this.box = this.el;
    this.loaded = false;
  }

  path() {
    return `/api/games/${encodeURIComponent(this.view.gameId)}/analysis`;
  }

  async copy(what, button) {
    let text;
    if (what === 'fen') {
      const game = this.view.game;
      const ply = this.view.viewPly === null ? game.moves.length : this.view.viewPly;
      text = ply === game.moves.length ? game.fen : placementFen(this.view.positions()[ply], ply);
    } else {
      const response = await fetch(`/api/games/${encodeURIComponent(this.view.gameId)}/pgn${this.data && this.data.status === 'done' ? '?analysis=1' : ''}`);
      text = await response.text();
    }
    button.dataset.copied = text;
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = t('Copied');
    } catch {
      button.textContent = t('Copy failed');
    }
    setTimeout(() => { button.textContent = what === 'fen' ? t('Copy FEN') : t('Copy PGN'); }, 1500);
  }

  async load() {
    this.loaded = true;
    try {
      this.apply(await api('GET', this.path()));
    } catch (error) {
      this.statusEl.textContent = t('Could not read the analysis: {reason}', { reason: error.message });
    }
  }

  async start() {
    this.button.disabled = true;
    try {
      this.apply(await api('POST', this.path()));
    } catch (error) {
      this.button.disabled = false;
      this.statusEl.textContent = error.message;
    }
  }

  apply(data) {
    this.data = data;
    clearTimeout(this.timer);
    if (data.status === 'queued' || data.status === 'running') {
      this.timer = setTimeout(() => this.load(), POLL_MS);
    }
    this.view.render();
  }

  render(ply) {
    const game = this.view.game;
    const finished = game.status === 'finished';
    this.box.hidden = !finished;
    if (finished && !this.loaded) this.load();
    this.pieceInfo(ply);
    const data = this.data;
    if (!finished || !data) return;
    const working = data.status === 'queued' || data.status === 'running';
    this.button.hidden = data.status !== 'none' && data.status !== 'failed';
    this.progress.hidden = !working;
    this.progress.max = data.progress.total;
    this.progress.value = data.progress.done;
    const texts = {
      // The button says it (its title the rest): the panel's room is short.
      none: '',
      queued: t('Waiting for the engine…'),
      running: t('Analysing: {done} of {total} positions.', { done: data.progress.done, total: data.progress.total }),
      done: t('Evaluations by Rookery’s engine. Click the graph to jump to a move.'),
      failed: t('The analysis failed. Try again.'),
    };
    this.statusEl.textContent = texts[data.status] || '';
    this.renderGraph(data, ply);
    this.renderMarks(data);
    if (data.acpl) {
      const side = (v) => (v === null || v === undefined ? '–' : String(v));
      this.acplEl.textContent = t('Average centipawn loss: White {white} · Black {black}', { white: side(data.acpl.white), black: side(data.acpl.black) });
    } else {
      this.acplEl.textContent = '';
    }
    const judged = data.moves.find((move) => move.ply === ply);
    const position = data.positions.find((p) => p.ply === ply);
    const turn = this.view.positions()[ply]?.turn;
    let advice = position ? evalSentence(position, turn) : '';
    if (judged && judged.judgement) {
      advice += t(' {move} is {judgement, select, inaccuracy {an inaccuracy} mistake {a mistake} other {a blunder}}: {best} was best.', { move: game.san[ply - 1], judgement: judged.judgement, best: judged.best_san });
    }
    this.adviceEl.textContent = advice;
  }

  renderGraph(data, ply) {
    const positions = data.positions;
    if (!positions.length) {
      clear(this.graphEl);
      return;
    }
    const total = Math.max(1, data.progress.total - 1);
    const width = 300;
    const height = 80;
    const x = (p) => (p / total) * width;
    const y = (chances) => height / 2 - chances * (height / 2);
    const turns = this.view.positions().map((p) => p.turn);
    const points = positions.map((p) => `${x(p.ply).toFixed(1)},${y(whiteChances(p, turns[p.ply])).toFixed(1)}`);
    const graph = svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'eval-svg', role: 'img', 'aria-label': t('Evaluation graph: click to jump to a move'), preserveAspectRatio: 'none' });
    graph.append(svg('rect', { x: 0, y: 0, width, height, class: 'eval-bg' }));
    // As lichess draws it: the area between the line and zero takes the
    // colour of the side ahead, light above the middle (White better), dark
    // below (Black better). One polygon, clipped to each half.
    const mid = height / 2;
    const area = `0,${mid} ${points.join(' ')} ${x(positions[positions.length - 1].ply)},${mid}`;
    graphCount += 1;
    for (const [side, top] of [['white', 0], ['black', mid]]) {
      const id = `eval-${side}-half-${graphCount}`;
      const clip = svg('clipPath', { id });
      clip.append(svg('rect', { x: 0, y: top, width, height: mid }));
      graph.append(clip);
      graph.append(svg('polygon', { points: area, class: `eval-area ${side}`, 'clip-path': `url(#${id})` }));
    }
    graph.append(svg('polyline', { points: points.join(' '), class: 'eval-line' }));
    graph.append(svg('line', { x1: 0, y1: mid, x2: width, y2: mid, class: 'eval-mid' }));
    for (const move of data.moves) {
      if (!move.judgement) continue;
      const p = positions.find((q) => q.ply === move.ply);
      if (p) graph.append(svg('circle', { cx: x(p.ply), cy: y(whiteChances(p, turns[p.ply])), r: 3, class: `eval-mark ${move.judgement}` }));
    }
    graph.append(svg('line', { x1: x(ply), y1: 0, x2: x(ply), y2: height, class: 'eval-cursor' }));
    graph.addEventListener('click', (event) => {
      const box = graph.getBoundingClientRect();
      const target = Math.round(((event.clientX - box.left) / box.width) * total);
      this.view.goTo(target);
    });
    clear(this.graphEl, graph);
  }

  renderMarks(data) {
    const byPly = new Map(data.moves.map((move) => [move.ply, move]));
    for (const button of this.view.movesEl.querySelectorAll('[data-ply]')) {
      const move = byPly.get(Number(button.dataset.ply));
      let mark = button.querySelector('.judgement');
      const judgement = move && move.judgement;
      if (!judgement) {
        if (mark) mark.remove();
        button.removeAttribute('title');
        continue;
      }
      if (!mark) {
        mark = h('span', { class: `judgement ${judgement}` });
        button.append(mark);
      }
      mark.className = `judgement ${judgement}`;
      mark.textContent = MARKS[judgement];
      button.title = t('{judgement, select, inaccuracy {inaccuracy} mistake {mistake} other {blunder}}: {best} was best (−{loss} cp)', { judgement: move.judgement, best: move.best_san, loss: move.loss });
      button.dataset.judgement = judgement;
    }
  }

  // Hovering (title) or long-pressing a piece tells what it is and how
  // many times it has moved.
  pieceInfo(ply) {
    const game = this.view.game;
    const counts = moveCounts(game.initial_fen, game.moves, ply);
    for (const square of this.view.board.el.querySelectorAll('[data-square]')) {
      const piece = square.querySelector('[data-piece]');
      if (!piece) {
        square.removeAttribute('title');
        continue;
      }
      const code = piece.dataset.piece;
      const times = counts.get(square.dataset.square) || 0;
      const info = `${code[0] === 'w' ? 'White' : 'Black'} ${ROLE_NAMES[code[1]]} on ${square.dataset.square}, moved ${times} time${times === 1 ? '' : 's'}`;
      square.title = info;
      square.dataset.info = info;
      if (!square.dataset.pressInfo) {
        square.dataset.pressInfo = '1';
        let timer = null;
        square.addEventListener('touchstart', () => {
          timer = setTimeout(() => this.view.flash(square.dataset.info || ''), 500);
        }, { passive: true });
        square.addEventListener('touchend', () => clearTimeout(timer));
      }
    }
  }
}

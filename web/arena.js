// Arena tournaments (issue 38): the list and the creation form (/arenas),
// an arena's page (/arenas/{id}: countdown, standings live and paged, the
// podium, one's own games, join and pause), and the way back from a game
// to its arena. The arena's WebSocket (/ws/arenas/{id}) pushes every change
// and, to a player, each new pairing: the page goes to the game, and the
// game page comes back here when the game is over.

import { api } from './api.js';
import { h, clear } from './dom.js';
import { currentAccount } from './session.js';
import { t } from './i18n.js';

const RETURN_KEY = 'rookery:arena-game';
// The arena game this tab just came back from (not to be followed again).
const DONE_KEY = 'rookery:arena-done';

function goToGame(arenaId, gameId) {
  // The game page brings the player back here once the game ends.
  window.sessionStorage.setItem(RETURN_KEY, JSON.stringify({ arena: arenaId, game: gameId }));
  window.location.assign(`/games/${encodeURIComponent(gameId)}`);
}

function clockText(arena) {
  const minutes = arena.clock.limit / 60;
  return `${Number.isInteger(minutes) ? minutes : minutes.toFixed(2)}+${arena.clock.increment}`;
}

function countdown(seconds) {
  const s = Math.max(0, Math.round(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

export async function arenasPage(root) {
  document.title = t('Arenas · Rookery');
  const [list, account] = await Promise.all([api('GET', '/api/tournament'), currentAccount()]);
  const item = (arena) => h('li', { class: 'game-item' },
    h('a', { class: 'game-link', href: `/arenas/${encodeURIComponent(arena.id)}` },
      h('span', { class: 'game-label' }, arena.fullName),
      h('span', { class: 'game-details' },
        t('{clock} · {count, plural, one {# player} other {# players}}{rated, select, no { · casual} other {}}{private, select, yes { · entry code} other {}}', { clock: clockText(arena), count: arena.nbPlayers, rated: arena.rated ? 'yes' : 'no', private: arena.private ? 'yes' : 'no' }))));
  const section = (title, arenas, empty) => h('section', { class: 'card' }, h('h2', null, title),
    arenas.length ? h('ul', { class: 'game-list' }, arenas.map(item)) : h('p', { class: 'muted' }, empty));
  const error = h('p', { class: 'form-error', role: 'alert' });
  const field = (label, name, props) => h('label', { class: 'field' }, h('span', null, label), h('input', { name, ...props }));
  const form = h('form', { class: 'new-arena', novalidate: true },
    field(t('Name'), 'name', { type: 'text', maxlength: '30', placeholder: t('Club night') }),
    h('div', { class: 'field-row' },
      field(t('Clock (minutes)'), 'clockTime', { type: 'number', min: '0', max: '60', step: '0.5', value: '3' }),
      field(t('Increment (seconds)'), 'clockIncrement', { type: 'number', min: '0', max: '60', value: '2' })),
    h('div', { class: 'field-row' },
      field(t('Duration (minutes)'), 'minutes', { type: 'number', min: '1', max: '720', value: '30' }),
      field(t('Starts in (minutes)'), 'waitMinutes', { type: 'number', min: '0', max: '1440', value: '5' })),
    field(t('Entry code (optional)'), 'password', { type: 'text', autocomplete: 'off' }),
    h('label', { class: 'checkbox' }, h('input', { type: 'checkbox', name: 'rated', checked: true }), h('span', null, t('Rated'))),
    h('label', { class: 'checkbox' }, h('input', { type: 'checkbox', name: 'berserkable', checked: true }), h('span', null, t('Berserk allowed'))),
    error,
    h('button', { type: 'submit', class: 'primary' }, t('Create arena')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    const value = (name) => form.elements[name].value.trim();
    const body = {
      clockTime: Number(value('clockTime')), clockIncrement: Number(value('clockIncrement')),
      minutes: Number(value('minutes')), waitMinutes: Number(value('waitMinutes')),
      rated: form.elements.rated.checked, berserkable: form.elements.berserkable.checked,
    };
    if (value('name')) body.name = value('name');
    if (value('password')) body.password = value('password');
    try {
      const arena = await api('POST', '/api/tournament', { body });
      window.location.assign(`/arenas/${encodeURIComponent(arena.id)}`);
    } catch (problem) {
      error.textContent = problem.message;
    }
  });
  clear(root, h('div', { class: 'lobby' },
    h('div', { class: 'lobby-side' },
      section(t('Starting soon'), list.created, t('No arena is scheduled.')),
      section(t('Playing now'), list.started, t('No arena is running.')),
      section(t('Finished'), list.finished, t('No arena has finished yet.'))),
    h('div', { class: 'lobby-side' },
      account ? h('section', { class: 'card' }, h('h2', null, t('New arena')), form)
        : h('section', { class: 'card' }, h('p', null, h('a', { href: '/login' }, t('Log in')), t(' to create an arena.'))))));
}

export async function arenaPage(root, id) {
  document.title = t('Arena · Rookery');
  const account = await currentAccount();
  const title = h('h1', null, t('Arena'));
  const facts = h('p', { class: 'muted arena-facts' });
  const clock = h('p', { class: 'arena-clock', role: 'timer' });
  const actions = h('div', { class: 'actions' });
  const notice = h('p', { class: 'form-error', role: 'alert' });
  const podium = h('div', { class: 'arena-podium' });
  const table = h('div', { class: 'arena-standing' });
  const pager = h('div', { class: 'actions' });
  const mine = h('div', { class: 'arena-mine' });
  clear(root, h('div', { class: 'lobby arena' },
    h('section', { class: 'card' }, title, facts, clock, actions, notice, podium, table, pager),
    h('div', { class: 'lobby-side' }, h('section', { class: 'card' }, h('h2', null, t('Your games')), mine))));

  let arena = null;
  let following = false;
  let page = 1;
  let socket = null;
  let deadline = null;
  const tick = () => {
    if (!arena || deadline === null) return;
    const left = (deadline - Date.now()) / 1000;
    clock.textContent = arena.isFinished ? t('Finished')
      : arena.isStarted ? t('Ends in {time}', { time: countdown(left) }) : t('Starts in {time}', { time: countdown(left) });
  };
  setInterval(tick, 1000);

  const act = async (path, form) => {
    notice.textContent = '';
    try {
      await api('POST', path, { form });
    } catch (problem) {
      notice.textContent = problem.message;
    }
  };
  const draw = () => {
    title.textContent = arena.fullName;
    facts.textContent = t('{clock} · {rated, select, yes {rated} other {casual}} · {count, plural, one {# player} other {# players}}{berserk, select, yes { · berserk allowed} other {}}', { clock: clockText(arena), rated: arena.rated ? 'yes' : 'no', count: arena.nbPlayers, berserk: arena.berserkable ? 'yes' : 'no' });
    deadline = Date.now() + 1000 * (arena.secondsToStart ?? arena.secondsToFinish ?? 0);
    tick();
    const me = arena.me;
    clear(actions);
    if (!account) {
      actions.append(h('a', { class: 'button', href: '/login' }, t('Log in to join')));
    } else if (!arena.isFinished) {
      if (me && !me.withdraw) {
        actions.append(h('button', { type: 'button', class: 'button', dataset: { action: 'pause' },
          onclick: () => act(`/api/tournament/${encodeURIComponent(id)}/withdraw`) }, t('Pause')));
      } else {
        const code = arena.private ? h('input', { type: 'text', name: 'entry-code', placeholder: t('Entry code'), 'aria-label': t('Entry code') }) : null;
        if (code) actions.append(code);
        actions.append(h('button', { type: 'button', class: 'primary', dataset: { action: 'join' },
          onclick: () => act(`/api/tournament/${encodeURIComponent(id)}/join`, code ? { password: code.value } : {}) },
        me ? t('Come back') : t('Join')));
      }
    }
    clear(podium, arena.podium ? h('ol', { class: 'podium' },
      arena.podium.map((p) => h('li', null, `${p.name} — ${p.score} points`))) : null);
    const rows = arena.standing.players.map((p) => h('tr', { dataset: { player: p.name } },
      h('td', null, String(p.rank)),
      h('td', null, p.name, p.withdraw ? ' (paused)' : '', p.playing ? ' ⚔' : ''),
      h('td', null, String(p.rating)),
      h('td', { class: 'sheet' }, p.sheet.scores, p.sheet.fire ? ' 🔥' : ''),
      h('td', { class: 'score' }, String(p.score))));
    clear(table, h('table', { class: 'standing' },
      h('thead', null, h('tr', null, h('th', null, '#'), h('th', null, t('Player')), h('th', null, t('Rating')), h('th', null, t('Games')), h('th', null, t('Score')))),
      h('tbody', null, rows)));
    const pages = arena.standing.pages || 1;
    clear(pager, pages > 1 ? [
      h('button', { type: 'button', disabled: page <= 1, onclick: () => turn(page - 1) }, '←'),
      h('span', null, ` page ${page} of ${pages} `),
      h('button', { type: 'button', disabled: page >= pages, onclick: () => turn(page + 1) }, '→')] : []);
    clear(mine, me && me.games.length ? h('ul', { class: 'game-list' }, me.games.map((g) => h('li', { class: 'game-item' },
      h('a', { class: 'game-link', href: `/games/${encodeURIComponent(g.id)}` },
        h('span', { class: 'game-label' }, `as ${g.color}`),
        h('span', { class: 'game-details' }, !g.settled ? 'playing' : g.aborted ? 'aborted'
          : g.winner === null ? 'draw' : g.winner === g.color ? 'won' : 'lost')))))
      : h('p', { class: 'muted' }, t('No games yet.')));
  };
  const turn = (next) => {
    page = next;
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: 'page', page }));
  };
  const connect = () => {
    const scheme = window.location.protocol === 'https:' ? 'wss' : 'ws';
    socket = new WebSocket(`${scheme}://${window.location.host}/ws/arenas/${encodeURIComponent(id)}`);
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(event.data);
      if (message.type === 'arena') {
        arena = message;
        page = message.standing.page;
        draw();
        // Paired while this page was away (or loading): follow the game.
        const going = message.me && message.me.games.find((g) => !g.settled
          && g.id !== window.sessionStorage.getItem(DONE_KEY));
        if (going && !following) {
          following = true;
          setTimeout(() => goToGame(id, going.id), 1000);
        }
      } else if (message.type === 'paired' && !following) {
        following = true;
        goToGame(id, message.game_id);
      } else if (message.type === 'error') notice.textContent = message.message;
    });
    socket.addEventListener('close', () => { if (root.isConnected) setTimeout(connect, 2000); });
  };
  connect();
}

// On a game page: if this game came from an arena's pairing, offer the
// player berserk while they may (offerBerserk), and go back to the arena
// once it is over (the arena then sends the next pairing). A player who
// opened an arena game in play some other way (a link, another tab) is
// found out by the game's export, which names its arena.
export async function returnToArena(gameId, view) {
  let target;
  try {
    target = JSON.parse(window.sessionStorage.getItem(RETURN_KEY) || 'null');
  } catch {
    target = null;
  }
  if ((!target || target.game !== gameId) && view && view.seat && view.game && view.game.status !== 'finished') {
    const exported = await api('GET', `/game/export/${encodeURIComponent(gameId)}`).catch(() => null);
    if (exported && exported.tournament) {
      target = { arena: exported.tournament, game: gameId };
      window.sessionStorage.setItem(RETURN_KEY, JSON.stringify(target));
    }
  }
  if (!target || target.game !== gameId) return;
  if (view) offerBerserk(view, gameId, target.arena);
  const check = async () => {
    const game = await api('GET', `/api/games/${encodeURIComponent(gameId)}`).catch(() => null);
    if (game && game.status === 'finished') {
      window.sessionStorage.removeItem(RETURN_KEY);
      window.sessionStorage.setItem(DONE_KEY, gameId);
      setTimeout(() => window.location.assign(`/arenas/${encodeURIComponent(target.arena)}`), 1500);
      return;
    }
    setTimeout(check, 1000);
  };
  check();
}

// The berserk button of an arena game's page, as lichess's: shown to a
// player of an arena that allows berserk until their first move; a click
// halves their clock and drops their increment for a point more on a win
// (POST /api/board/game/{id}/berserk, as the logged-in account). The
// players' bars mark whoever went berserk (the state's `berserk`).
async function offerBerserk(view, gameId, arenaId) {
  const arena = await api('GET', `/api/tournament/${encodeURIComponent(arenaId)}`).catch(() => null);
  if (!arena || !arena.berserkable) return;
  const button = h('button', { type: 'button', class: 'berserk-button', hidden: true }, t('Berserk'));
  const sync = () => {
    const game = view.game;
    const color = view.seat && view.seat.color;
    const firstMoveMade = !!game && game.moves.length > (color === 'black' ? 1 : 0);
    button.hidden = !game || !color || game.status === 'finished' || firstMoveMade
      || (game.berserk || []).includes(color);
  };
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      await api('POST', `/api/board/game/${encodeURIComponent(gameId)}/berserk`);
      button.hidden = true;
    } catch (error) {
      view.flash(t('Berserk refused: {reason}', { reason: error.message }));
    }
    button.disabled = false;
  });
  view.firstMoveEl.after(button);
  view.afterUpdate = sync;
  sync();
}

// "My games" (/me/games): the person's live games first, then recent
// ones. Logged in, the account's games (`GET /api/account/games`), from any
// device; on a browser with no account, the games whose seats this browser
// holds (the seat tokens in localStorage), each read from the server.

import { api, loadLevels } from './api.js';
import { h, clear } from './dom.js';
import { currentAccount, loginHref } from './session.js';
import { getBothSeats, getSeat, heldGameIds } from './storage.js';
import { gameList } from './watch.js';
import { t } from './i18n.js';

// Requests at once when reading this browser's games one by one.
const PARALLEL = 4;
// At most this many of this browser's games are read.
const MAX_LOCAL = 60;

export async function myGamesPage(root) {
  document.title = t('My games · Rookery');
  const [levels, account] = await Promise.all([loadLevels(), currentAccount()]);
  const live = h('div', { class: 'game-list-holder', id: 'my-live-games', 'aria-busy': 'true' });
  const recent = h('div', { class: 'game-list-holder', id: 'my-recent-games', 'aria-busy': 'true' });
  clear(root, h('div', { class: 'my-games' },
    h('section', { class: 'card' },
      h('h1', null, t('My games')),
      account
        ? h('p', { class: 'muted' }, t('The games of {name}, on every device where you log in.', { name: account.name }))
        : h('p', { class: 'muted' }, t('The games this browser holds a seat in. '),
          h('a', { href: loginHref() }, t('Log in')), t(' to find your games on every device.')),
      h('h2', null, t('Playing now')),
      live),
    h('section', { class: 'card' }, h('h2', null, t('Recent games')), recent)));

  let games;
  try {
    games = account ? (await api('GET', '/api/account/games')).games : await localGames();
  } catch (error) {
    clear(live, h('p', { class: 'form-error', role: 'alert' }, t('Your games are unavailable: {reason}', { reason: error.message })));
    clear(recent);
    return;
  }
  // A game this browser holds a seat in is the person's too, logged in or not.
  const mine = (game) => {
    const both = getBothSeats(game.id);
    if (both) return game.turn;
    const seat = getSeat(game.id);
    if (seat) return seat.color;
    if (!account) return null;
    const name = account.name.toLowerCase();
    return ['white', 'black'].find((color) => (game[color].name || '').toLowerCase() === name) || null;
  };
  const playing = games.filter((game) => game.status !== 'finished').sort(newestFirst);
  const finished = games.filter((game) => game.status === 'finished').sort(newestFirst);
  clear(live, marked(gameList(playing, levels, { empty: t('No games in progress.') }), playing, mine));
  clear(recent, gameList(finished, levels, { empty: t('No finished games yet.') }));
  live.setAttribute('aria-busy', 'false');
  recent.setAttribute('aria-busy', 'false');
}

const newestFirst = (a, b) => (b.created_at || 0) - (a.created_at || 0);

// "Your move" on the games waiting for this person.
function marked(list, games, mine) {
  for (const game of games) {
    const color = mine(game);
    if (game.status !== 'active' || !color || game.turn !== color) continue;
    const link = list.querySelector(`[data-game-id="${CSS.escape(game.id)}"] .game-link`);
    if (link) link.append(h('span', { class: 'badge your-move' }, t('Your move')));
  }
  return list;
}

// The GameStates of the games this browser holds seats in; a game the
// server no longer knows is left out.
async function localGames() {
  const ids = heldGameIds().slice(-MAX_LOCAL);
  const games = [];
  let next = 0;
  const worker = async () => {
    while (next < ids.length) {
      const id = ids[next];
      next += 1;
      try {
        games.push(await api('GET', `/api/games/${encodeURIComponent(id)}`));
      } catch {
        // Gone from the server (or unreadable now): not listed.
      }
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  return games;
}

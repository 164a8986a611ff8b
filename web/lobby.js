// The lobby (/): start a game against a friend, the AI, or AI v AI; a name
// for the scoreboard (namecard.js); see what is being played now.

import { importCard } from './import.js';
import { api, createGame, loadLevels } from './api.js';
import { h, clear } from './dom.js';
import { openChallengeDialog, challengeButton } from './challenges.js';
import {
  CLOCKS, levelLabel, playerHref, ratedText, ratingText, timeControlText,
} from './format.js';
import { nameCard } from './namecard.js';
import { followingCard } from './social.js';
import { poolsCard } from './pools.js';
import { gameList, sortForWatching } from './watch.js';
import { t } from './i18n.js';

export async function lobbyPage(root) {
  document.title = t('Rookery · Play chess');
  const levels = await loadLevels();
  const levelOptions = (selected) => {
    const numbers = levels.length ? levels.map((entry) => entry.level) : [1, 2, 3, 4, 5, 6, 7, 8];
    return numbers.map((level) => h('option', { value: String(level), selected: level === selected }, levelLabel(level, levels)));
  };
  const radio = (name, value, label, checked) => h('label', { class: 'choice' },
    h('input', { type: 'radio', name, value, checked }), h('span', null, label));

  const error = h('p', { class: 'form-error', role: 'alert' });
  const customClock = h('div', { class: 'field-row', dataset: { show: 'custom-clock' }, hidden: true },
    h('label', { class: 'field' }, h('span', null, t('Minutes')),
      h('input', { type: 'number', name: 'minutes', min: '0', max: '180', step: '0.5', value: '5' })),
    h('label', { class: 'field' }, h('span', null, t('Increment (seconds)')),
      h('input', { type: 'number', name: 'increment', min: '0', max: '60', step: '1', value: '3' })));
  const submit = h('button', { type: 'submit', class: 'primary' }, t('Create game'));

  const form = h('form', { class: 'new-game', 'aria-labelledby': 'new-game-title', novalidate: true },
    h('fieldset', { class: 'segmented' }, h('legend', null, t('Opponent')),
      radio('mode', 'friend', t('A friend'), true),
      radio('mode', 'local', t('Pass and play'), false),
      radio('mode', 'ai', t('The computer'), false),
      radio('mode', 'aivai', t('Computer v computer'), false)),
    h('label', { class: 'field', dataset: { show: 'ai' } }, h('span', null, t('Computer level')),
      h('select', { name: 'level', id: 'level' }, levelOptions(3))),
    h('div', { class: 'field-row', dataset: { show: 'aivai' } },
      h('label', { class: 'field' }, h('span', null, t('White level')),
        h('select', { name: 'white-level', id: 'white-level' }, levelOptions(4))),
      h('label', { class: 'field' }, h('span', null, t('Black level')),
        h('select', { name: 'black-level', id: 'black-level' }, levelOptions(4)))),
    h('label', { class: 'checkbox', dataset: { show: 'friend' } },
      h('input', { type: 'checkbox', name: 'open-seek', id: 'open-seek' }),
      h('span', null, t('Open seek: list the game in the lobby so anyone can join'))),
    h('fieldset', { class: 'segmented', dataset: { show: 'friend' } }, h('legend', null, t('Game')),
      radio('rated', 'false', t('Casual'), true),
      radio('rated', 'true', t('Rated'), false)),
    h('fieldset', { class: 'segmented', dataset: { show: 'friend ai' } }, h('legend', null, t('You play')),
      radio('color', 'white', t('White'), true),
      radio('color', 'random', t('Random'), false),
      radio('color', 'black', t('Black'), false)),
    h('label', { class: 'field' }, h('span', null, t('Variant')),
      h('select', { name: 'variant', id: 'variant' },
        h('option', { value: 'standard' }, t('Standard')),
        h('option', { value: 'chess960' }, t('Chess960 (a start drawn from the 960)')))),
    h('label', { class: 'field' }, h('span', null, t('Clock')),
      h('select', { name: 'clock', id: 'clock' }, CLOCKS.map(([value, label]) => h('option', { value }, label)))),
    customClock,
    h('details', { class: 'fen-details' },
      h('summary', null, t('Start from a position (FEN)')),
      h('label', { class: 'field' }, h('span', null, 'FEN'),
        h('input', { type: 'text', name: 'fen', id: 'fen', autocomplete: 'off', spellcheck: 'false', placeholder: t('Leave empty for the standard start') }))),
    error,
    submit);

  const sync = () => {
    const mode = form.elements.mode.value;
    for (const el of form.querySelectorAll('[data-show]')) {
      const shows = el.dataset.show.split(' ');
      if (shows.includes('custom-clock')) el.hidden = form.elements.clock.value !== 'custom';
      else el.hidden = !shows.includes(mode);
    }
    const seek = form.elements['open-seek'].checked;
    submit.textContent = mode === 'aivai' ? t('Start and watch') : mode === 'ai' ? t('Play the computer')
      : mode === 'local' ? t('Start pass and play') : seek ? t('Post open seek') : t('Create game and get link');
  };
  form.addEventListener('change', sync);
  sync();

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    let request;
    try {
      request = buildRequest(form);
    } catch (problem) {
      error.textContent = problem.message;
      return;
    }
    submit.disabled = true;
    try {
      const id = await createGame(request.body);
      window.location.assign(`/games/${encodeURIComponent(id)}`);
    } catch (problem) {
      submit.disabled = false;
      error.textContent = problem.code === 'bad_request' && request.body.fen
        ? t('The server rejected the game: {reason}', { reason: problem.message })
        : t('Could not create the game: {reason}', { reason: problem.message });
    }
  });

  const liveList = h('div', { class: 'game-list-holder' });
  const seekList = h('div', { class: 'game-list-holder', id: 'open-seeks', 'aria-live': 'polite' });
  const customCard = h('section', { class: 'card' }, h('h1', { id: 'new-game-title' }, t('New game')), form);
  const custom = () => {
    customCard.scrollIntoView({ behavior: 'smooth' });
    form.elements.mode.value = 'friend';
    form.elements['open-seek'].checked = true;
    sync();
  };
  clear(root, h('div', { class: 'lobby' },
    h('div', { class: 'lobby-side' }, poolsCard(custom), customCard),
    h('div', { class: 'lobby-side' },
      nameCard(),
      onlineCard(),
      followingCard(),
      h('section', { class: 'card' }, h('h2', null, t('Open seeks')), seekList),
      h('section', { class: 'card' }, h('h2', null, t('Live now')), liveList,
        h('p', null, h('a', { href: '/watch' }, t('All live and finished games →')))),
      importCard())));

  const refresh = async () => {
    const [seeks, live] = await Promise.allSettled([
      api('GET', '/api/games?joinable=true&limit=8'),
      api('GET', '/api/games?status=active&limit=8'),
    ]);
    if (seeks.status === 'fulfilled') {
      clear(seekList, seekItems(seeks.value.games));
    } else {
      clear(seekList, h('p', { class: 'muted' }, t('Open seeks are unavailable right now.')));
    }
    if (live.status === 'fulfilled') {
      // A game still waiting for its opponent is not being played yet; an
      // open seek is listed once, above, with its Join.
      const playing = live.value.games.filter((game) => game.status === 'active');
      clear(liveList, gameList(sortForWatching(playing), levels, { empty: t('No games in progress. Start one!') }));
    } else {
      clear(liveList, h('p', { class: 'muted' }, t('Live games are unavailable right now.')));
    }
  };
  refresh();
  setInterval(refresh, 5000);
}

// Open seeks: games whose creator asked for any opponent. Each links to the
// game page, which asks before taking the seat.
function seekItems(games) {
  if (!games.length) return h('p', { class: 'muted' }, t('No open seeks. Post one with “Open seek”.'));
  return h('ul', { class: 'game-list' }, games.map((game) => {
    const free = ['white', 'black'].find((color) => game[color].kind === 'human' && game[color].taken === false) || 'black';
    const host = game[free === 'white' ? 'black' : 'white'];
    const rating = host.name && typeof host.rating === 'number' ? ` (${ratingText(host.rating, host.provisional)})` : '';
    const label = t('Play {side, select, white {white} other {black}} against {name}{rating}', { side: free, name: host.name || t('an anonymous player'), rating });
    return h('li', { class: 'game-item', dataset: { gameId: game.id } },
      h('a', { href: `/games/${encodeURIComponent(game.id)}`, class: 'game-link' },
        h('span', { class: 'game-label' }, label),
        h('span', { class: 'game-details' }, `${game.variant === 'chess960' ? 'Chess960 · ' : ''}${timeControlText(game)} · ${ratedText(game)}`),
        h('span', { class: 'badge join' }, t('Join'))));
  }));
}

function buildRequest(form) {
  const mode = form.elements.mode.value;
  const body = {};
  let color = form.elements.color.value;
  if (color === 'random') {
    const bytes = new Uint8Array(1);
    crypto.getRandomValues(bytes);
    color = bytes[0] % 2 === 0 ? 'white' : 'black';
  }
  if (mode === 'friend') {
    body.white = { kind: 'human' };
    body.black = { kind: 'human' };
    body.as = color;
    // A friend game is private (the invite link carries its secret) unless
    // the creator asks for an open seek.
    body.visibility = form.elements['open-seek'].checked ? 'open' : 'private';
    // Casual unless chosen: a game with a friend moves no rating by surprise.
    body.rated = form.elements.rated.value === 'true';
  } else if (mode === 'local') {
    // Pass and play: two players at this device, both seats held here.
    body.white = { kind: 'human' };
    body.black = { kind: 'human' };
    body.as = 'both';
  } else if (mode === 'ai') {
    const ai = { kind: 'ai', level: Number(form.elements.level.value) };
    body.white = color === 'white' ? { kind: 'human' } : ai;
    body.black = color === 'black' ? { kind: 'human' } : ai;
    body.as = color;
  } else {
    body.white = { kind: 'ai', level: Number(form.elements['white-level'].value) };
    body.black = { kind: 'ai', level: Number(form.elements['black-level'].value) };
  }
  const clock = form.elements.clock.value;
  if (clock === 'custom') {
    const minutes = Number(form.elements.minutes.value);
    const increment = Number(form.elements.increment.value);
    if (!Number.isFinite(minutes) || !Number.isFinite(increment) || minutes < 0 || increment < 0 || (minutes === 0 && increment === 0)) {
      throw new Error(t('Enter a clock of at least some minutes or an increment.'));
    }
    body.clock = { initial: Math.round(minutes * 60), increment: Math.round(increment) };
  } else if (clock !== 'none') {
    const [initial, increment] = clock.split('+').map(Number);
    body.clock = { initial, increment };
  }
  const fen = form.elements.fen.value.trim();
  if (fen) body.fen = fen;
  // Chess960: the server draws the start unless a FEN is given.
  if (form.elements.variant.value === 'chess960') body.variant = 'chess960';
  return { body };
}

// Who is online now (issue 36): the people with a page of this site open,
// each with a link to the game they play or "in the lobby", and a
// "Challenge" button; above them, a challenge by name. Refreshed every few
// seconds while the lobby is open.
const ONLINE_REFRESH_MS = 5000;

function onlineCard() {
  const list = h('div', { class: 'online-list', id: 'online-list', 'aria-live': 'polite' });
  const name = h('input', {
    type: 'text', id: 'challenge-name', maxlength: '20', autocomplete: 'off', spellcheck: 'false', autocapitalize: 'off', 'aria-label': t('Name to challenge'),
    placeholder: t('Their name'),
  });
  const message = h('p', { class: 'form-error', role: 'alert', id: 'challenge-name-error' });
  const byName = h('form', { class: 'challenge-by-name', novalidate: true },
    h('label', { class: 'field' }, h('span', null, t('Challenge by name')),
      h('span', { class: 'inline-row' }, name, h('button', { type: 'submit' }, t('Challenge')))),
    message);
  byName.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.textContent = '';
    const typed = name.value.trim();
    if (!/^[A-Za-z0-9_-]{1,20}$/.test(typed)) {
      message.textContent = t('Names are 1–20 letters, digits, _ or -.');
      return;
    }
    try {
      const profile = await api('GET', `/api/players/${encodeURIComponent(typed)}`);
      openChallengeDialog(profile.name);
    } catch (error) {
      message.textContent = error.status === 404 ? t('Nobody is called “{name}”.', { name: typed }) : error.message;
    }
  });
  const card = h('section', { class: 'card', id: 'online-card' }, h('h2', null, t('Online now')), byName, list);
  const refresh = async () => {
    try {
      const online = await api('GET', '/api/online');
      if (!online.players.length) {
        clear(list, h('p', { class: 'muted' }, t('Nobody with an account is online right now.')));
        return;
      }
      clear(list, h('ul', { class: 'online-people' }, online.players.map((person) => h('li', { class: 'online-person', dataset: { name: person.name } },
        h('a', { href: playerHref(person.name), class: 'player-link' }, person.name),
        h('span', { class: 'rating-badge' }, ratingText(person.rating, person.provisional)),
        person.playing
          ? h('a', { href: `/games/${encodeURIComponent(person.playing)}`, class: 'online-playing' }, t('playing now'))
          : h('span', { class: 'muted online-lobby' }, t('in the lobby')),
        challengeButton(person.name)))),
      online.total > online.players.length ? h('p', { class: 'muted' }, `and ${online.total - online.players.length} more`) : null);
    } catch {
      clear(list, h('p', { class: 'muted' }, t('The online list is unavailable right now.')));
    }
  };
  refresh();
  setInterval(refresh, ONLINE_REFRESH_MS);
  return card;
}

// The header's player search (issue 36): type the first letters of a name,
// and the players whose names start so (any case) appear as you type, each
// with their rating, whether they are online, a link to their page and a
// "Challenge" button. Asks `GET /api/players?prefix=&limit=` once typing
// pauses (a debounce), and drops an answer that comes after a newer one.

import { api } from './api.js';
import { h, clear } from './dom.js';
import { challengeButton } from './challenges.js';
import { playerHref, ratingText } from './format.js';
import { t } from './i18n.js';

const DEBOUNCE_MS = 250;
const LIMIT = 8;
// What a name is made of (the server refuses anything else with a 400).
const NAME_PART = /^[A-Za-z0-9_-]{1,20}$/;

export function searchControl() {
  const listId = 'player-search-results';
  const input = h('input', {
    type: 'search', id: 'player-search', class: 'player-search-input', placeholder: t('Find a player'),
    autocomplete: 'off', spellcheck: 'false', maxlength: '20', 'aria-label': t('Find a player by name'),
    'aria-controls': listId, 'aria-expanded': 'false',
  });
  const results = h('div', { class: 'player-search-results', id: listId, role: 'region', 'aria-label': t('Players found'), 'aria-live': 'polite', hidden: true });
  const holder = h('div', { class: 'player-search', role: 'search' }, input, results);
  let timer = null;
  let asked = 0;

  const show = (open) => {
    results.hidden = !open;
    input.setAttribute('aria-expanded', String(open));
  };
  const draw = (players, prefix) => {
    if (!players.length) {
      clear(results, h('p', { class: 'muted' }, t('Nobody’s name starts with “{prefix}”.', { prefix })));
      return;
    }
    clear(results, h('ul', { class: 'player-search-list' }, players.map((player) => h('li', { class: 'player-search-item', dataset: { name: player.name } },
      h('a', { href: playerHref(player.name), class: 'player-link' }, player.name),
      h('span', { class: 'rating-badge' }, ratingText(player.rating, player.provisional)),
      player.online ? h('span', { class: 'online-dot', title: t('Online now') }, h('span', { class: 'visually-hidden' }, 'online')) : null,
      challengeButton(player.name)))));
  };
  const search = async () => {
    const prefix = input.value.trim();
    const ticket = ++asked;
    if (!prefix) {
      show(false);
      return;
    }
    if (!NAME_PART.test(prefix)) {
      clear(results, h('p', { class: 'muted' }, t('Names have only letters, digits, _ and -.')));
      show(true);
      return;
    }
    try {
      const answer = await api('GET', `/api/players?prefix=${encodeURIComponent(prefix)}&limit=${LIMIT}`);
      if (ticket !== asked) return;
      draw(answer.players, prefix);
    } catch (error) {
      if (ticket !== asked) return;
      clear(results, h('p', { class: 'form-error' }, t('Search is unavailable: {reason}', { reason: error.message })));
    }
    show(true);
  };
  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(search, DEBOUNCE_MS);
  });
  input.addEventListener('focus', () => {
    if (input.value.trim() && results.childElementCount) show(true);
  });
  holder.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') {
      show(false);
      input.focus();
    } else if (event.key === 'Enter' && event.target === input) {
      // Enter goes to the first player found.
      const first = results.querySelector('a.player-link');
      if (first && !results.hidden) window.location.assign(first.href);
    }
  });
  document.addEventListener('pointerdown', (event) => {
    if (event.target instanceof Node && !holder.contains(event.target) && !(event.target.closest && event.target.closest('dialog'))) show(false);
  });
  return holder;
}

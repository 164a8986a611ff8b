// Quick pairing (issue 38): the lobby's one-click pools. One WebSocket
// (/ws/lobby) brings each pool's counts live and, after a click, the
// pairing; the page then goes to the game. Leaving the page closes the
// socket, which leaves the pool (after the server's short grace).

import { h, clear } from './dom.js';
import { currentAccount } from './session.js';
import { saveSeat } from './storage.js';
import { t } from './i18n.js';

export function poolsCard(onCustom) {
  const grid = h('div', { class: 'pool-grid', role: 'group', 'aria-label': t('Quick pairing') });
  const status = h('p', { class: 'pool-status muted', role: 'status', 'aria-live': 'polite' });
  // Rated or casual (issue 36): an account chooses (rated by default);
  // without an account every pool game is casual.
  const choice = (value, label, checked) => h('label', { class: 'choice' },
    h('input', { type: 'radio', name: 'pool-rated', value, checked }), h('span', null, label));
  const ratedChoice = h('fieldset', { class: 'segmented pool-rated', hidden: true }, h('legend', null, t('Game')),
    choice('true', 'Rated', true), choice('false', 'Casual', false));
  const anonymousNote = h('p', { class: 'muted pool-casual-note', hidden: true }, t('Casual games: log in to play rated.'));
  currentAccount().then((account) => {
    ratedChoice.hidden = !account;
    anonymousNote.hidden = !!account;
  });
  const card = h('section', { class: 'card pools', id: 'pools' },
    h('h2', null, t('Quick pairing')), ratedChoice, anonymousNote, grid, status);
  const buttons = new Map();
  let socket = null;
  let waitingIn = null;

  const draw = (pools) => {
    if (!buttons.size) {
      for (const pool of pools) {
        const count = h('span', { class: 'pool-count' });
        const button = h('button', {
          type: 'button', class: 'pool-button', dataset: { pool: pool.id },
          onclick: () => toggle(pool.id),
        }, h('span', { class: 'pool-clock' }, pool.id), count);
        buttons.set(pool.id, { button, count });
        grid.append(button);
      }
      grid.append(h('button', { type: 'button', class: 'pool-button custom', onclick: onCustom }, t('Custom')));
    }
    for (const pool of pools) {
      const entry = buttons.get(pool.id);
      if (entry) entry.count.textContent = t('{playing} playing · {waiting} waiting', { playing: pool.playing, waiting: pool.waiting });
    }
  };

  const mark = () => {
    for (const [id, { button }] of buttons) {
      button.classList.toggle('waiting', id === waitingIn);
      button.setAttribute('aria-pressed', id === waitingIn ? 'true' : 'false');
    }
    status.textContent = waitingIn ? t('Looking for a {kind} opponent… click again to cancel.', { kind: waitingIn }) : '';
    for (const input of ratedChoice.querySelectorAll('input')) input.disabled = !!waitingIn;
  };

  const toggle = (id) => {
    if (!socket || socket.readyState !== WebSocket.OPEN) return;
    const rated = (ratedChoice.querySelector('input:checked') || {}).value !== 'false';
    socket.send(JSON.stringify(waitingIn === id ? { type: 'leave' } : { type: 'enter', pool: id, rated }));
  };

  const connect = () => {
    const scheme = window.location.protocol === 'https:' ? 'wss' : 'ws';
    socket = new WebSocket(`${scheme}://${window.location.host}/ws/lobby`);
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(event.data);
      if (message.type === 'pools') draw(message.pools);
      else if (message.type === 'entered') { waitingIn = message.pool; mark(); }
      else if (message.type === 'left') { waitingIn = null; mark(); }
      else if (message.type === 'error') status.textContent = message.message;
      else if (message.type === 'paired') {
        saveSeat(message.game_id, { color: message.color, token: message.token });
        window.location.assign(`/games/${encodeURIComponent(message.game_id)}`);
      }
    });
    socket.addEventListener('close', () => {
      waitingIn = null;
      mark();
      if (!card.isConnected) return;
      status.textContent = t('Reconnecting…');
      setTimeout(connect, 2000);
    });
  };
  clear(grid);
  connect();
  return card;
}

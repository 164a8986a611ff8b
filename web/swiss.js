// A Swiss tournament's page (/swiss/{id}): its terms, round N of M and
// status, Join / Withdraw and "Skip next round" for the team's members, a
// leader's "Start round N now", the pairings of a round with links to the
// games, and the standings with their tie-breaks. `GET /api/swiss/{id}`
// draws it first (with `me`: joined, a bye asked, leader); the page's
// WebSocket (`/ws/swiss/{id}`) then sends the whole tournament after every
// change, and the page redraws from it without a reload.

import { api, ApiError } from './api.js';
import { h, clear } from './dom.js';
import { playerHref } from './format.js';
import { currentAccount, loginHref } from './session.js';
import { clockText, teamHref } from './teams.js';
import { t } from './i18n.js';

// lichess's roundInterval for "rounds started by hand" (Rookery's info
// says null).
const BY_HAND = 99999999;
const byHand = (swiss) => swiss.roundInterval === null || swiss.roundInterval === undefined || swiss.roundInterval >= BY_HAND;

const RESULTS = { '1-0': '1–0', '0-1': '0–1', '1/2-1/2': '½–½', '+-': '+ – −', '-+': '− – +', '--': '− – −' };
const BYES = { pab: t('pairing bye (1 point)'), full: t('bye requested (1 point)'), half: t('bye requested (½ point)'), zero: t('absent (0 points)') };
const points = (value) => (Number.isInteger(value) ? String(value) : `${Math.floor(value) || ''}½`);

function notFound(root, id) {
  document.title = t('Tournament not found · Rookery');
  clear(root, h('section', { class: 'card narrow' },
    h('h1', null, t('Tournament not found')),
    h('p', null, t('There is no Swiss tournament “{id}”.', { id })),
    h('p', null, h('a', { href: '/teams' }, t('See the teams')))));
}

function refusal(error) {
  const text = String(error && error.message ? error.message : error);
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}${/[.!?]$/.test(text) ? '' : '.'}`;
}

export async function swissPage(root, id) {
  document.title = t('Swiss tournament · Rookery');
  const path = `/api/swiss/${encodeURIComponent(id)}`;
  let data;
  try {
    data = await api('GET', path);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      notFound(root, id);
      return;
    }
    throw error;
  }
  const account = await currentAccount();
  let team = null;
  try {
    team = await api('GET', `/api/team/${encodeURIComponent(data.teamId)}`);
  } catch {
    // Only its name: the id links to it all the same.
  }
  const state = {
    swiss: data,
    standings: data.standings || [],
    rounds: data.rounds || [],
    me: data.me || null,
    // When `swiss.nextRound.in` was read, for the countdown.
    readAt: Date.now(),
    shownRound: null,
  };
  const myName = account ? account.name.toLowerCase() : null;

  const title = h('h1', { id: 'swiss-title' });
  const meta = h('p', { class: 'muted', id: 'swiss-meta' });
  const status = h('p', { class: 'status', id: 'swiss-status', 'aria-live': 'polite' });
  const live = h('span', { class: 'connection', id: 'swiss-live' }, t('Connecting…'));
  const actions = h('div', { class: 'swiss-actions', id: 'swiss-actions' });
  const message = h('p', { class: 'form-error', role: 'alert', id: 'swiss-message' });
  const yourGame = h('div', { id: 'swiss-your-game', 'aria-live': 'polite' });
  const roundPicker = h('select', { id: 'swiss-round-select', 'aria-label': t('Round') });
  const pairings = h('div', { id: 'swiss-pairings' });
  const standings = h('div', { class: 'table-scroll', id: 'swiss-standings' });
  roundPicker.addEventListener('change', () => {
    state.shownRound = Number(roundPicker.value);
    drawPairings();
  });

  clear(root, h('div', { class: 'swiss-page' },
    h('section', { class: 'card' },
      title,
      meta,
      h('div', { class: 'status-line' }, status, live),
      h('p', { class: 'muted swiss-description', id: 'swiss-description' }),
      actions,
      message,
      yourGame,
      h('p', { class: 'actions swiss-files' },
        h('a', { href: `/swiss/${encodeURIComponent(id)}.trf`, id: 'swiss-trf', download: `${id}.trf` }, t('Download TRF')),
        h('span', { class: 'muted' }, t('(FIDE’s Tournament Report File, for other pairing programs)')),
        h('a', { href: `${path}/games`, id: 'swiss-pgn' }, t('Games (PGN)')))),
    h('div', { class: 'swiss-columns' },
      h('section', { class: 'card', 'aria-labelledby': 'swiss-standings-title' },
        h('h2', { id: 'swiss-standings-title' }, t('Standings')),
        standings),
      h('section', { class: 'card', 'aria-labelledby': 'swiss-pairings-title' },
        h('div', { class: 'chat-head' },
          h('h2', { id: 'swiss-pairings-title' }, t('Pairings')),
          roundPicker),
        pairings))));

  const isMe = (name) => !!myName && String(name).toLowerCase() === myName;

  function statusText() {
    const { swiss } = state;
    if (swiss.status === 'finished') return t('Finished');
    const manual = byHand(swiss);
    let next = '';
    if (swiss.nextRound) {
      const left = Math.max(0, swiss.nextRound.in - Math.floor((Date.now() - state.readAt) / 1000));
      next = left > 0 ? `next round in ${left < 120 ? `${left} s` : `${Math.ceil(left / 60)} min`}` : t('next round starting');
    } else if (manual) next = t('the next round starts when a leader starts it');
    if (swiss.status === 'created') {
      if (!swiss.nextRound) return t('Not started');
      const left = Math.max(0, swiss.nextRound.in - Math.floor((Date.now() - state.readAt) / 1000));
      const when = left > 0 ? `round 1 in ${left < 120 ? `${left} s` : `${Math.ceil(left / 60)} min`}` : t('round 1 starting');
      return `Not started · ${when}${manual ? ', or when a leader starts it' : ''}`;
    }
    if (swiss.nbOngoing > 0) return t('Round {round} is being played ({count, plural, one {# game} other {# games}} on)', { round: swiss.round, count: swiss.nbOngoing });
    return `Round ${swiss.round} is over${next ? ` · ${next}` : ''}`;
  }

  function drawHead() {
    const { swiss } = state;
    document.title = `${swiss.name} · Rookery`;
    title.textContent = swiss.name;
    clear(meta,
      t('Team '), h('a', { href: teamHref(swiss.teamId), id: 'swiss-team' }, team ? team.name : swiss.teamId),
      ` · ${clockText(swiss.clock)} · ${swiss.rated ? 'rated' : 'casual'} · `,
      h('span', { id: 'swiss-round' }, `round ${swiss.round} of ${swiss.nbRounds}`),
      ` · ${swiss.nbPlayers} ${swiss.nbPlayers === 1 ? 'player' : 'players'}`,
      byHand(swiss) ? t(' · rounds started by hand') : null);
    status.textContent = statusText();
    status.dataset.status = swiss.status;
    const description = root.querySelector('#swiss-description');
    description.textContent = swiss.description || '';
    description.hidden = !swiss.description;
  }

  // The buttons depend on a few facts only; they are drawn again when those
  // change, so an update does not take the focus from under a finger.
  let actionsKey = null;
  function drawActions() {
    const { swiss, me } = state;
    const key = JSON.stringify([swiss.status, swiss.round, swiss.nbOngoing > 0, me, !!team && team.joined]);
    if (key === actionsKey) return;
    actionsKey = key;
    const buttons = [];
    const act = (label, method, suffix, { id, className = '' } = {}) => {
      const button = h('button', { type: 'button', id, class: className }, label);
      button.addEventListener('click', async () => {
        button.disabled = true;
        message.textContent = '';
        try {
          await api(method, `${path}/${suffix}`, { form: {} });
          await reload();
        } catch (error) {
          message.textContent = refusal(error);
          button.disabled = false;
        }
      });
      return button;
    };
    if (swiss.status !== 'finished') {
      if (!account) {
        buttons.push(h('a', { class: 'button primary', href: loginHref(), id: 'swiss-login' }, t('Log in to play')));
      } else if (team && !team.joined) {
        buttons.push(h('p', { class: 'muted', id: 'swiss-not-member' }, t('Only members of the team play. '),
          h('a', { href: teamHref(swiss.teamId) }, `Join ${team.name}`), t(' first.')));
      } else if (me && me.joined) {
        buttons.push(act(t('Withdraw'), 'POST', 'withdraw', { id: 'swiss-withdraw', className: 'danger' }));
        buttons.push(me.absentNext
          ? act(t('Play next round'), 'DELETE', 'bye', { id: 'swiss-bye' })
          : act(t('Skip next round'), 'POST', 'bye', { id: 'swiss-bye' }));
        if (me.absentNext) buttons.push(h('span', { class: 'badge join', id: 'swiss-bye-note' }, t('You sit out the next round')));
      } else {
        const refused = (swiss.verdicts && swiss.verdicts.list || []).filter((v) => v.verdict !== 'ok');
        buttons.push(act(t('Join tournament'), 'POST', 'join', { id: 'swiss-join', className: 'primary' }));
        if (refused.length) buttons.push(h('span', { class: 'muted' }, `Not met: ${refused.map((v) => v.condition).join(', ')}`));
      }
      if (me && me.leader && swiss.nbOngoing === 0) {
        buttons.push(act(t('Start round {round} now', { round: swiss.round + 1 }), 'POST', 'schedule-next-round', { id: 'swiss-start-round' }));
      }
    }
    clear(actions, buttons.length ? h('div', { class: 'actions' }, buttons) : null);
  }

  // The viewer's own game (or bye) in the latest round.
  function drawYourGame() {
    const round = state.rounds[state.rounds.length - 1];
    if (!myName || !round) {
      clear(yourGame);
      return;
    }
    const game = round.pairings.find((p) => p.gameId && (isMe(p.white) || isMe(p.black)));
    const bye = round.pairings.find((p) => p.bye && isMe(p.player));
    if (game && !game.result) {
      const color = isMe(game.white) ? 'white' : 'black';
      const opponent = color === 'white' ? game.black : game.white;
      clear(yourGame, h('p', { class: 'flash your-game' },
        t('Round {round}: you play {side, select, white {white} other {black}} against {opponent}. ', { round: round.round, side: color, opponent }),
        h('a', { class: 'button primary', href: `/games/${encodeURIComponent(game.gameId)}`, id: 'your-game', dataset: { color, game: game.gameId } }, t('Go to your game'))));
    } else if (bye) {
      clear(yourGame, h('p', { class: 'flash', id: 'your-bye' }, `Round ${round.round}: you have a ${BYES[bye.bye] || 'bye'}.`));
    } else clear(yourGame);
  }

  function drawPairings() {
    const count = state.rounds.length;
    if (!count) {
      roundPicker.hidden = true;
      clear(pairings, h('p', { class: 'muted' }, t('No round has been paired yet.')));
      return;
    }
    const latest = state.rounds[count - 1].round;
    if (state.shownRound === null || state.shownRound > latest) state.shownRound = latest;
    roundPicker.hidden = count < 2;
    clear(roundPicker, state.rounds.map((r) => h('option', { value: r.round, selected: r.round === state.shownRound }, `Round ${r.round}`)));
    const round = state.rounds.find((r) => r.round === state.shownRound) || state.rounds[count - 1];
    const who = (name) => h('a', { class: `player-link${isMe(name) ? ' me' : ''}`, href: playerHref(name) }, name);
    clear(pairings, h('table', { class: 'score-table swiss-pairings', dataset: { round: round.round } },
      h('caption', null, `Round ${round.round}`),
      h('thead', null, h('tr', null, [t('Board'), t('White'), t('Black'), t('Result'), t('Game')].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', null, round.pairings.map((p) => (p.bye
        ? h('tr', { dataset: { bye: p.player } },
          h('td', null, p.board ?? ''), h('td', { colspan: '2' }, who(p.player)),
          h('td', null, BYES[p.bye] || 'bye'), h('td', null, ''))
        : h('tr', { dataset: { board: p.board, game: p.gameId || '' } },
          h('td', null, String(p.board)),
          h('td', null, who(p.white)),
          h('td', null, who(p.black)),
          h('td', { class: 'swiss-result' }, p.result ? RESULTS[p.result] || p.result : 'playing'),
          h('td', null, p.gameId
            ? h('a', { href: `/games/${encodeURIComponent(p.gameId)}` }, p.result ? t('View') : t('Watch'))
            : '')))))));
  }

  function drawStandings() {
    if (!state.standings.length) {
      const joined = state.swiss.nbPlayers;
      clear(standings, h('p', { class: 'muted', id: 'swiss-no-standings' }, joined
        ? t('{count, plural, one {# player has} other {# players have}} joined; the standings start with round 1.', { count: joined })
        : t('Nobody has joined yet.')));
      return;
    }
    const columns = [
      ['#', t('Rank')], [t('Player'), null], [t('Pts'), t('Points')], ['BH-1', t('Buchholz cut 1')], ['BH', t('Buchholz')],
      ['SB', t('Sonneborn-Berger')], ['W', t('Wins')], [t('Rating'), null], [t('Perf'), t('Performance')],
    ];
    clear(standings, h('table', { class: 'score-table swiss-standings' },
      h('caption', null, t('Points, then Buchholz cut 1, Buchholz, Sonneborn-Berger and wins')),
      h('thead', null, h('tr', null, columns.map(([label, long]) => h('th', { scope: 'col', title: long }, long
        ? [h('abbr', { title: long, 'aria-hidden': 'true' }, label), h('span', { class: 'visually-hidden' }, long)]
        : label)))),
      h('tbody', null, state.standings.map((line) => h('tr', { dataset: { player: line.username }, class: isMe(line.username) ? 'me' : null },
        h('td', null, String(line.rank)),
        h('th', { scope: 'row' }, h('a', { class: 'player-link', href: playerHref(line.username) }, line.username),
          line.absent ? h('span', { class: 'badge join' }, 'withdrawn') : null),
        h('td', { class: 'swiss-points' }, points(line.points)),
        h('td', null, points(line.buchholzCut1)),
        h('td', null, points(line.buchholz)),
        h('td', null, String(line.sonnebornBerger)),
        h('td', null, String(line.wins)),
        h('td', null, String(line.rating)),
        h('td', null, String(line.performance)))))));
  }

  function draw() {
    drawHead();
    drawActions();
    drawYourGame();
    drawPairings();
    drawStandings();
  }

  // Messages from the socket so far: a GET answered after one of them may
  // be older than it (the socket follows every change), so its tournament
  // is then left aside and only `me` and the verdicts are taken.
  let heard = 0;

  async function reload() {
    const before = heard;
    const fresh = await api('GET', path);
    if (team) {
      try {
        team = await api('GET', `/api/team/${encodeURIComponent(fresh.teamId)}`);
      } catch {
        // Keep what the page knew.
      }
    }
    if (heard !== before) {
      Object.assign(state, { me: fresh.me || null, swiss: { ...state.swiss, verdicts: fresh.verdicts } });
    } else {
      Object.assign(state, {
        swiss: fresh, standings: fresh.standings || [], rounds: fresh.rounds || [], me: fresh.me || null, readAt: Date.now(),
      });
    }
    draw();
  }

  draw();
  const ticker = setInterval(() => {
    if (!root.isConnected || !root.contains(status)) {
      clearInterval(ticker);
      return;
    }
    if (state.swiss.nextRound) status.textContent = statusText();
  }, 1000);
  follow(id, (message) => {
    heard += 1;
    const { me } = state;
    Object.assign(state, {
      swiss: { ...message.swiss, verdicts: state.swiss.verdicts },
      standings: message.standings || [],
      rounds: message.rounds || [],
      me,
      readAt: Date.now(),
    });
    draw();
  }, (open) => {
    live.textContent = open ? t('Live') : t('Reconnecting…');
    live.className = `connection ${open ? 'open' : 'closed'}`;
  });
}

// The page's socket: every message is the whole tournament. It reconnects
// with a growing wait (1 s to 30 s), and the first message of each
// connection brings the page up to date.
function follow(id, onMessage, onOpen) {
  const scheme = window.location.protocol === 'https:' ? 'wss' : 'ws';
  const url = `${scheme}://${window.location.host}/ws/swiss/${encodeURIComponent(id)}`;
  let wait = 1000;
  const connect = () => {
    const ws = new WebSocket(url);
    ws.addEventListener('open', () => {
      wait = 1000;
      onOpen(true);
    });
    ws.addEventListener('message', (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      if (message && message.type === 'swiss' && message.swiss) onMessage(message);
    });
    ws.addEventListener('close', () => {
      onOpen(false);
      setTimeout(connect, wait);
      wait = Math.min(wait * 2, 30000);
    });
  };
  connect();
}

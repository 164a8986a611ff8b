// Teams (issue 39): the list of teams with a form to create one (/teams),
// a team's page (/team/{id}: members, joining and leaving, the leaders'
// tools, the team's Swiss tournaments and a leader's form for a new one),
// and the teams section of a player's page. Every call is lichess's team
// API (docs/lichess-compat.md, "Teams and Swiss tournaments").

import { api, apiLines, ApiError } from './api.js';
import { h, clear } from './dom.js';
import { playerHref } from './format.js';
import { currentAccount, loginHref } from './session.js';
import { formatDate, t } from './i18n.js';

export const teamHref = (id) => `/team/${encodeURIComponent(id)}`;
export const swissHref = (id) => `/swiss/${encodeURIComponent(id)}`;

// "3+2" from lichess's clock (seconds): minutes, with ½ and ¼ as lichess
// writes them.
export function clockText(clock) {
  if (!clock) return '';
  const minutes = clock.limit / 60;
  const shown = { 0.25: '¼', 0.5: '½', 0.75: '¾' }[minutes] ?? String(Math.round(minutes * 100) / 100);
  return `${shown}+${clock.increment}`;
}

// A tournament's state in words, for lists.
export function swissStatusText(swiss) {
  if (swiss.status === 'finished') return t('Finished after {count, plural, one {# round} other {# rounds}}', { count: swiss.round });
  if (swiss.status === 'started') return t('Round {round} of {rounds}', { round: swiss.round, rounds: swiss.nbRounds });
  return t('Starts {date}', { date: formatDate(swiss.startsAt, { time: true }) });
}

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

function teamTerms(team) {
  return [
    plural(team.nbMembers, 'member'),
    team.open ? t('open to all') : t('joined by request'),
    team.password ? t('entry password') : null,
  ].filter(Boolean).join(' · ');
}

function teamItem(team) {
  return h('li', null, h('a', { class: 'game-link', href: teamHref(team.id), dataset: { teamId: team.id } },
    h('span', { class: 'game-label' }, team.name),
    h('span', { class: 'game-details' }, teamTerms(team))));
}

// The server's refusal as a sentence.
function refusal(error) {
  const text = String(error && error.message ? error.message : error);
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}${/[.!?]$/.test(text) ? '' : '.'}`;
}

export async function teamsPage(root) {
  document.title = t('Teams · Rookery');
  const account = await currentAccount();
  const list = h('div', { id: 'team-list', 'aria-live': 'polite' });
  const pager = h('div', { class: 'actions' });
  const load = async (page) => {
    const data = await api('GET', `/api/team/all?page=${page}`);
    const teams = data.currentPageResults || [];
    clear(list, teams.length
      ? h('ul', { class: 'game-list' }, teams.map(teamItem))
      : h('p', { class: 'muted' }, t('No teams yet.')));
    const button = (label, target) => {
      const el = h('button', { type: 'button', class: 'small' }, label);
      el.addEventListener('click', () => load(target));
      return el;
    };
    clear(pager,
      data.previousPage ? button(t('Previous page'), data.previousPage) : null,
      data.nbPages > 1 ? h('span', { class: 'muted' }, `Page ${data.currentPage} of ${data.nbPages}`) : null,
      data.nextPage ? button(t('Next page'), data.nextPage) : null);
  };
  clear(root, h('div', { class: 'lobby teams-page' },
    h('section', { class: 'card' },
      h('h1', null, t('Teams')),
      h('p', { class: 'muted' }, t('Clubs whose members play Swiss tournaments together.')),
      list, pager),
    h('div', { class: 'lobby-side' },
      account
        ? createTeamCard()
        : h('section', { class: 'card' },
          h('h2', null, t('Create a team')),
          h('p', null, h('a', { class: 'button primary', href: loginHref() }, t('Log in to create a team')))))));
  await load(1);
}

function createTeamCard() {
  const name = h('input', { type: 'text', id: 'team-name', maxlength: '60', required: true, autocomplete: 'off' });
  const description = h('textarea', { id: 'team-description', rows: '3', maxlength: '4000' });
  const password = h('input', { type: 'password', id: 'team-password', maxlength: '200', autocomplete: 'new-password' });
  const radio = (value, label, checked) => h('label', { class: 'choice' },
    h('input', { type: 'radio', name: 'team-open', value, checked }), h('span', null, label));
  const message = h('p', { class: 'form-error', role: 'alert' });
  const submit = h('button', { type: 'submit', class: 'primary' }, t('Create team'));
  const form = h('form', { class: 'new-game', id: 'create-team', novalidate: true },
    h('label', { class: 'field' }, h('span', null, t('Name')), name),
    h('label', { class: 'field' }, h('span', null, t('Description')), description),
    h('fieldset', { class: 'segmented' }, h('legend', null, t('Who joins')),
      radio('true', 'Anyone', true), radio('false', 'By request', false)),
    h('label', { class: 'field' }, h('span', null, t('Entry password (optional)')), password),
    message, submit);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.textContent = '';
    if (name.value.trim().length < 2) {
      message.textContent = t('A team’s name has at least 2 characters.');
      return;
    }
    submit.disabled = true;
    try {
      const body = {
        name: name.value.trim(),
        description: description.value,
        open: form.elements['team-open'].value === 'true',
      };
      if (password.value) body.password = password.value;
      const team = await api('POST', '/api/team', { body });
      window.location.assign(teamHref(team.id));
    } catch (error) {
      message.textContent = refusal(error);
      submit.disabled = false;
    }
  });
  return h('section', { class: 'card', 'aria-labelledby': 'create-team-title' },
    h('h2', { id: 'create-team-title' }, t('Create a team')), form);
}

function notFound(root, id) {
  document.title = t('Team not found · Rookery');
  clear(root, h('section', { class: 'card narrow' },
    h('h1', null, t('Team not found')),
    h('p', null, t('There is no team “{id}”.', { id })),
    h('p', null, h('a', { href: '/teams' }, t('See all teams')))));
}

// A button that runs `action`, says a refusal in `message`, then `after`.
function actionButton(label, action, { after, message, className = 'small', id } = {}) {
  const button = h('button', { type: 'button', class: className, id }, label);
  button.addEventListener('click', async () => {
    button.disabled = true;
    if (message) message.textContent = '';
    try {
      await action();
      if (after) await after();
    } catch (error) {
      if (message) message.textContent = refusal(error);
      button.disabled = false;
    }
  });
  return button;
}

export async function teamPage(root, id) {
  document.title = t('Team · Rookery');
  const account = await currentAccount();
  const path = `/api/team/${encodeURIComponent(id)}`;
  const message = h('p', { class: 'form-error', role: 'alert', id: 'team-message' });
  const draw = async () => {
    let team;
    try {
      team = await api('GET', path);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        notFound(root, id);
        return;
      }
      throw error;
    }
    document.title = `${team.name} · Rookery`;
    const me = account ? account.name.toLowerCase() : null;
    const leader = !!me && (team.leaders || []).some((user) => user.id === me);
    const [members, swisses, requests] = await Promise.all([
      apiLines(`${path}/users`),
      apiLines(`${path}/swiss?max=50`),
      leader ? api('GET', `${path}/requests`) : Promise.resolve([]),
    ]);
    clear(root, h('div', { class: 'lobby team-page' },
      h('div', { class: 'lobby-side' },
        h('section', { class: 'card' },
          h('h1', { id: 'team-title' }, team.name),
          h('p', { class: 'muted', id: 'team-terms' }, teamTerms(team)),
          team.description ? h('p', { class: 'team-description' }, team.description) : null,
          membership(team, account, draw, message),
          message),
        h('section', { class: 'card', 'aria-labelledby': 'team-swiss-title' },
          h('h2', { id: 'team-swiss-title' }, t('Swiss tournaments')),
          swisses.length
            ? h('ul', { class: 'game-list', id: 'team-swiss' }, swisses.map((swiss) => h('li', null,
              h('a', { class: 'game-link', href: swissHref(swiss.id), dataset: { swissId: swiss.id } },
                h('span', { class: 'game-label' }, swiss.name),
                h('span', { class: 'game-details' },
                  `${clockText(swiss.clock)} · ${swiss.rated ? 'rated' : 'casual'} · ${plural(swiss.nbPlayers, 'player')} · ${swissStatusText(swiss)}`)))))
            : h('p', { class: 'muted' }, t('No tournaments yet.')),
          leader ? newSwissForm(team) : null)),
      h('div', { class: 'lobby-side' },
        leader ? requestsCard(team, requests, draw, message) : null,
        h('section', { class: 'card', 'aria-labelledby': 'team-members-title' },
          h('h2', { id: 'team-members-title' }, t('Members')),
          h('ul', { class: 'session-list', id: 'team-members' },
            members.map((member) => memberRow(team, member, { me, leader, after: draw, message })))))));
  };
  await draw();
}

// Join (with a message and a password when the team asks for them), the
// request waiting, or Leave.
function membership(team, account, redraw, message) {
  const path = `/api/team/${encodeURIComponent(team.id)}`;
  if (!account) {
    return h('p', { class: 'actions' }, h('a', { class: 'button primary', href: loginHref(), id: 'team-login' }, t('Log in to join')));
  }
  if (team.joined) {
    return h('p', { class: 'actions' },
      h('span', { class: 'badge', id: 'team-joined' }, t('You are a member')),
      actionButton(t('Leave team'), () => api('POST', `${path}/quit`), { after: redraw, message, id: 'team-leave', className: 'danger small' }));
  }
  if (team.requested) {
    return h('p', { class: 'flash', id: 'team-requested' }, t('Your request to join is waiting for a leader.'));
  }
  const note = h('textarea', { id: 'team-join-message', rows: '2', maxlength: '2000' });
  const password = h('input', { type: 'password', id: 'team-join-password', autocomplete: 'off' });
  const submit = h('button', { type: 'submit', class: 'primary', id: 'team-join' }, team.open ? t('Join team') : t('Ask to join'));
  const form = h('form', { class: 'inline-form', novalidate: true },
    team.open ? null : h('label', { class: 'field' }, h('span', null, t('Message to the leaders')), note),
    team.password ? h('label', { class: 'field' }, h('span', null, t('Team password')), password) : null,
    h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.textContent = '';
    if (!team.open && !note.value.trim()) {
      message.textContent = t('Write a few words to the leaders with your request.');
      return;
    }
    const fields = {};
    if (!team.open) fields.message = note.value.trim();
    if (team.password) fields.password = password.value;
    submit.disabled = true;
    try {
      await api('POST', `${path}/join`, { form: fields });
      await redraw();
    } catch (error) {
      message.textContent = error.status === 403 && team.password ? t('Wrong team password.') : refusal(error);
      submit.disabled = false;
    }
  });
  return form;
}

function memberRow(team, member, { me, leader, after, message }) {
  const path = `/api/team/${encodeURIComponent(team.id)}`;
  const user = encodeURIComponent(member.id);
  const self = member.id === me;
  const tools = [];
  if (leader && !self) {
    if (member.leader) {
      tools.push(actionButton(t('Remove leadership'), () => api('DELETE', `${path}/leaders/${user}`), { after, message }));
    } else {
      tools.push(actionButton(t('Make leader'), () => api('PUT', `${path}/leaders/${user}`), { after, message }));
      tools.push(actionButton(t('Remove'), () => api('POST', `${path}/kick/${user}`), { after, message, className: 'small danger' }));
    }
  }
  return h('li', { class: 'session-row', dataset: { member: member.id } },
    h('div', null,
      h('a', { class: 'player-link session-device', href: playerHref(member.name) }, member.name),
      member.leader ? h('span', { class: 'badge' }, t('Leader')) : null),
    tools.length ? h('div', { class: 'actions' }, tools) : null);
}

function requestsCard(team, requests, after, message) {
  const path = `/api/team/${encodeURIComponent(team.id)}`;
  return h('section', { class: 'card', 'aria-labelledby': 'team-requests-title' },
    h('h2', { id: 'team-requests-title' }, t('Requests to join')),
    requests.length
      ? h('ul', { class: 'session-list', id: 'team-requests' }, requests.map(({ request, user }) => {
        const who = encodeURIComponent(request.userId);
        return h('li', { class: 'session-row', dataset: { request: request.userId } },
          h('div', null,
            h('a', { class: 'player-link session-device', href: playerHref(user.username || user.name || request.userId) },
              user.username || user.name || request.userId),
            request.message ? h('div', { class: 'game-details' }, `“${request.message}”`) : null),
          h('div', { class: 'actions' },
            actionButton(t('Accept'), () => api('POST', `${path}/request/${who}/accept`), { after, message, className: 'small primary' }),
            actionButton(t('Decline'), () => api('POST', `${path}/request/${who}/decline`), { after, message })));
      }))
      : h('p', { class: 'muted' }, t('No requests waiting.')));
}

// Round intervals offered (seconds): lichess's automatic one, a few fixed
// ones, and rounds started by hand (lichess's 99999999).
const INTERVALS = [
  ['-1', t('Automatic (30 s to 1 min)')],
  ['10', '10 seconds'],
  ['60', '1 minute'],
  ['300', '5 minutes'],
  ['600', '10 minutes'],
  ['99999999', t('Rounds started by hand')],
];

function newSwissForm(team) {
  const num = (id, value, min, max, step = '1') => h('input', { type: 'number', id, value, min, max, step });
  const name = h('input', { type: 'text', id: 'swiss-name', maxlength: '30', value: `${team.name} Swiss`.slice(0, 30) });
  const minutes = num('swiss-minutes', '3', '0', '180', '0.25');
  const increment = num('swiss-increment', '2', '0', '120');
  const rounds = num('swiss-rounds', '5', '3', '100');
  const startsIn = num('swiss-starts-in', '10', '0', '10080');
  const interval = h('select', { id: 'swiss-interval' },
    INTERVALS.map(([value, label]) => h('option', { value, selected: value === '-1' }, label)));
  const rated = h('input', { type: 'checkbox', id: 'swiss-rated', checked: true });
  const description = h('textarea', { id: 'swiss-description', rows: '2', maxlength: '1000' });
  const message = h('p', { class: 'form-error', role: 'alert' });
  const submit = h('button', { type: 'submit', class: 'primary' }, t('Create tournament'));
  const form = h('form', { class: 'new-game swiss-form', id: 'new-swiss', novalidate: true, hidden: true },
    h('label', { class: 'field' }, h('span', null, t('Name')), name),
    h('div', { class: 'field-row' },
      h('label', { class: 'field' }, h('span', null, t('Clock (minutes)')), minutes),
      h('label', { class: 'field' }, h('span', null, t('Increment (seconds)')), increment)),
    h('div', { class: 'field-row' },
      h('label', { class: 'field' }, h('span', null, t('Rounds')), rounds),
      h('label', { class: 'field' }, h('span', null, t('First round in (minutes)')), startsIn)),
    h('label', { class: 'field' }, h('span', null, t('Between rounds')), interval),
    h('label', { class: 'checkbox' }, rated, h('span', null, t('Rated'))),
    h('label', { class: 'field' }, h('span', null, t('Description (optional)')), description),
    message, submit);
  const open = h('button', { type: 'button', id: 'new-swiss-button', 'aria-expanded': 'false', 'aria-controls': 'new-swiss' }, t('New Swiss tournament'));
  open.addEventListener('click', () => {
    form.hidden = !form.hidden;
    open.setAttribute('aria-expanded', String(!form.hidden));
    if (!form.hidden) name.focus();
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.textContent = '';
    const limit = Math.round(Number(minutes.value) * 60);
    const plus = Math.round(Number(increment.value));
    const count = Math.round(Number(rounds.value));
    const wait = Number(startsIn.value);
    if (name.value.trim().length < 2) {
      message.textContent = t('A tournament’s name has 2 to 30 characters.');
      return;
    }
    if (!Number.isFinite(limit) || !Number.isFinite(plus) || limit < 0 || plus < 0 || (limit === 0 && plus === 0)) {
      message.textContent = t('Enter a clock of some minutes or an increment.');
      return;
    }
    if (!Number.isFinite(count) || count < 3 || count > 100) {
      message.textContent = t('A Swiss has 3 to 100 rounds.');
      return;
    }
    if (!Number.isFinite(wait) || wait < 0) {
      message.textContent = t('Enter when the first round starts, in minutes from now.');
      return;
    }
    submit.disabled = true;
    try {
      const fields = {
        name: name.value.trim(),
        'clock.limit': String(limit),
        'clock.increment': String(plus),
        nbRounds: String(count),
        startsAt: String(Date.now() + Math.round(wait * 60000)),
        roundInterval: interval.value,
        rated: String(rated.checked),
      };
      if (description.value.trim()) fields.description = description.value.trim();
      const swiss = await api('POST', `/api/swiss/new/${encodeURIComponent(team.id)}`, { form: fields });
      window.location.assign(swissHref(swiss.id));
    } catch (error) {
      message.textContent = refusal(error);
      submit.disabled = false;
    }
  });
  return h('div', { class: 'new-swiss' }, open, form);
}

// The teams of a player, for their page.
export function playerTeamsSection(name) {
  const holder = h('div', { id: 'player-teams', 'aria-live': 'polite' }, h('p', { class: 'muted' }, t('Loading…')));
  api('GET', `/api/team/of/${encodeURIComponent(name)}`).then((teams) => {
    const key = name.toLowerCase();
    clear(holder, teams.length
      ? h('ul', { class: 'game-list' }, teams.map((team) => h('li', null,
        h('a', { class: 'game-link', href: teamHref(team.id), dataset: { teamId: team.id } },
          h('span', { class: 'game-label' }, team.name),
          (team.leaders || []).some((user) => user.id === key) ? h('span', { class: 'badge' }, t('Leader')) : null,
          h('span', { class: 'game-details' }, teamTerms(team))))))
      : h('p', { class: 'muted' }, t('Not in any team yet.')));
  }, (error) => {
    clear(holder, h('p', { class: 'form-error', role: 'alert' }, t('Teams are unavailable: {reason}', { reason: error.message })));
  });
  return h('section', { class: 'card' }, h('h2', null, t('Teams')), holder);
}

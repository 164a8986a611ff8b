// The community's parts of the pages (issue 37): follow, block and report
// on a player page; the lists, who may challenge me and leaving on the
// account page; the people one follows in the lobby; a moderator's notice
// on every page. The routes are lichess's `/api/rel/…` and Rookery's
// `/api/account/social`, `/api/reports`, `/api/account/notices`,
// `/api/account/close` and `/api/account/export` (docs/API.md).

import { api } from './api.js';
import { h, clear } from './dom.js';
import { playerHref } from './format.js';
import { currentAccount, forgetSession } from './session.js';
import { t } from './i18n.js';

// lichess's NDJSON of users (`GET /api/rel/following`, `/blocking`).
export async function relatedUsers(kind) {
  const response = await fetch(`/api/rel/${kind}`, { headers: { Accept: 'application/x-ndjson' } });
  if (!response.ok) return [];
  const text = await response.text();
  return text.split('\n').filter((line) => line.trim()).map((line) => JSON.parse(line));
}

const say = (el, text) => { el.textContent = text; };
const problem = (error) => String((error && error.message) || t('Something went wrong.'));

// Follow, Block and Report on `name`'s page, for a logged-in visitor who
// is someone else.
export function relationSection(name) {
  const section = h('div', { class: 'relation-section' });
  currentAccount().then(async (account) => {
    if (!account || account.name.toLowerCase() === name.toLowerCase()) return;
    const key = name.toLowerCase();
    const [following, blocking] = await Promise.all([relatedUsers('following'), relatedUsers('blocking')]);
    let follows = following.some((user) => user.id === key);
    let blocks = blocking.some((user) => user.id === key);
    const status = h('p', { class: 'muted relation-status', role: 'status' });
    const follow = h('button', { type: 'button', id: 'follow-button' });
    const block = h('button', { type: 'button', id: 'block-button', class: 'danger' });
    const render = () => {
      follow.textContent = follows ? `Unfollow ${name}` : `Follow ${name}`;
      follow.setAttribute('aria-pressed', String(follows));
      block.textContent = blocks ? `Unblock ${name}` : `Block ${name}`;
      block.setAttribute('aria-pressed', String(blocks));
    };
    const change = async (verb, after) => {
      try {
        await api('POST', `/api/rel/${verb}/${encodeURIComponent(name)}`);
        after();
        render();
      } catch (error) {
        say(status, problem(error));
      }
    };
    follow.addEventListener('click', () => change(follows ? 'unfollow' : 'follow', () => {
      follows = !follows;
      if (follows) blocks = false;
      say(status, follows ? t('You follow {name}: their games show in your lobby.', { name }) : t('You no longer follow {name}.', { name }));
    }));
    block.addEventListener('click', () => change(blocks ? 'unblock' : 'block', () => {
      blocks = !blocks;
      if (blocks) follows = false;
      say(status, blocks
        ? t('{name} is blocked: they cannot challenge you, chat to you or be paired with you.', { name })
        : t('{name} is no longer blocked.', { name }));
    }));
    render();
    clear(section, h('div', { class: 'actions' }, follow, block), reportForm(name), status);
  });
  return section;
}

// "Report NAME": a reason, words, and the game it is about if any.
function reportForm(name) {
  const open = h('button', { type: 'button', id: 'report-button', 'aria-expanded': 'false' }, `Report ${name}`);
  const reason = h('select', { name: 'reason', id: 'report-reason' },
    h('option', { value: 'cheat' }, t('Cheating (computer help)')),
    h('option', { value: 'abuse' }, t('Abuse (insults, harassment)')),
    h('option', { value: 'sandbag' }, t('Sandbagging (losing on purpose)')),
    h('option', { value: 'other' }, t('Something else')));
  const text = h('textarea', { name: 'text', id: 'report-text', rows: '3', maxlength: '2000', required: true });
  const game = h('input', { type: 'text', name: 'game', id: 'report-game', autocomplete: 'off', placeholder: 'optional' });
  const error = h('p', { class: 'form-error', role: 'alert' });
  const done = h('p', { class: 'muted', id: 'report-sent', hidden: true });
  const form = h('form', { class: 'report-form', novalidate: true, hidden: true },
    h('label', { class: 'field' }, h('span', null, t('Why')), reason),
    h('label', { class: 'field' }, h('span', null, t('What happened')), text),
    h('label', { class: 'field' }, h('span', null, t('Game id or link')), game),
    error,
    h('button', { type: 'submit', class: 'primary' }, t('Send report')));
  open.addEventListener('click', () => {
    form.hidden = !form.hidden;
    open.setAttribute('aria-expanded', String(!form.hidden));
    if (!form.hidden) reason.focus();
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    say(error, '');
    const gameId = game.value.trim().split('/').filter(Boolean).pop() || null;
    try {
      await api('POST', '/api/reports', { body: { username: name, reason: reason.value, text: text.value, game: gameId } });
      form.hidden = true;
      open.hidden = true;
      done.hidden = false;
      say(done, t('Thank you: the moderators will look at your report on {name}.', { name }));
    } catch (failure) {
      say(error, problem(failure));
    }
  });
  return h('div', { class: 'report' }, open, form, done);
}

// The account page's parts: who may challenge me, the two lists, leaving.
export function accountSocialSections(account) {
  const policy = h('div', { id: 'challenge-policy' });
  const lists = h('div', { id: 'relations', 'aria-live': 'polite' });
  const load = async () => {
    const social = await api('GET', '/api/account/social');
    clear(policy, policyForm(social.challenge_policy));
    clear(lists,
      relationList(t('Following'), 'following-list', social.following, 'unfollow', t('You follow nobody yet: follow people from their page.'), load),
      relationList(t('Blocked'), 'blocking-list', social.blocking, 'unblock', t('You block nobody.'), load),
      social.moderator ? h('p', null, h('a', { href: '/mod', id: 'mod-link' }, t('Moderation: reports and the log'))) : null);
  };
  load().catch((error) => say(lists, problem(error)));
  return [
    h('section', { class: 'card', 'aria-labelledby': 'policy-title' },
      h('h2', { id: 'policy-title' }, t('Who may challenge you')), policy),
    h('section', { class: 'card', 'aria-labelledby': 'relations-title' },
      h('h2', { id: 'relations-title' }, t('People')), lists),
    leavingSection(account),
  ];
}

function policyForm(current) {
  const choices = [['everyone', t('Everyone')], ['following', t('Only people I follow')], ['nobody', t('Nobody')]];
  const select = h('select', { id: 'policy-select', name: 'challenge_policy' },
    choices.map(([value, label]) => h('option', { value, selected: value === current }, label)));
  const note = h('p', { class: 'muted', role: 'status' });
  select.addEventListener('change', async () => {
    try {
      const social = await api('PUT', '/api/account/social', { body: { challenge_policy: select.value } });
      say(note, `Saved: ${choices.find(([value]) => value === social.challenge_policy)[1].toLowerCase()} may challenge you.`);
    } catch (error) {
      say(note, problem(error));
    }
  });
  return h('label', { class: 'field' }, h('span', null, t('Challenges from')), select, note);
}

function relationList(title, id, names, verb, empty, reload) {
  const items = names.map((name) => h('li', null,
    h('a', { href: playerHref(name) }, name), ' ',
    h('button', {
      type: 'button',
      onclick: async () => {
        await api('POST', `/api/rel/${verb}/${encodeURIComponent(name)}`);
        await reload();
      },
    }, verb === 'unfollow' ? `Unfollow ${name}` : `Unblock ${name}`)));
  return h('div', { class: 'relation-list' },
    h('h3', null, title),
    names.length ? h('ul', { id }, items) : h('p', { class: 'muted', id }, empty));
}

// Export my data (one JSON download) and close my account.
function leavingSection(account) {
  const password = h('input', { type: 'password', id: 'close-password', autocomplete: 'current-password' });
  const confirm = h('input', { type: 'checkbox', id: 'close-confirm' });
  const error = h('p', { class: 'form-error', role: 'alert' });
  const form = h('form', { class: 'close-form', novalidate: true },
    account.has_password ? h('label', { class: 'field' }, h('span', null, t('Your password')), password) : null,
    h('label', { class: 'checkbox' }, confirm, h('span', null, t('I understand: nobody can log in as this account again; my games stay, under my name.'))),
    error,
    h('button', { type: 'submit', class: 'danger', id: 'close-account' }, t('Close my account')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    say(error, '');
    if (!confirm.checked) {
      say(error, t('Tick the box to confirm.'));
      return;
    }
    try {
      await api('POST', '/api/account/close', { body: { password: password.value } });
      forgetSession();
      window.location.assign('/');
    } catch (failure) {
      say(error, problem(failure));
    }
  });
  return h('section', { class: 'card', 'aria-labelledby': 'leaving-title' },
    h('h2', { id: 'leaving-title' }, t('Your data and leaving')),
    h('p', null, h('a', { class: 'button', href: '/api/account/export', download: '', id: 'export-link' }, t('Download my data')),
      ' ', h('span', { class: 'muted' }, t('Your account, settings and every game (as PGN), in one file.'))),
    form);
}

// The people one follows, in the lobby: online or not, and the game they
// play now.
export function followingCard() {
  const card = h('section', { class: 'card following-card', hidden: true, 'aria-labelledby': 'following-title' });
  currentAccount().then(async (account) => {
    if (!account) return;
    const users = await relatedUsers('following');
    if (!users.length) return;
    clear(card,
      h('h2', { id: 'following-title' }, t('People you follow')),
      h('ul', { class: 'following', id: 'following' }, users.map((user) => h('li', { dataset: { user: user.id } },
        h('span', { class: `online-dot ${user.online ? 'on' : ''}`, title: user.online ? 'online' : 'offline' }),
        h('a', { href: playerHref(user.username) }, user.username),
        user.disabled ? h('span', { class: 'muted' }, ' (closed)') : null,
        user.playing ? h('a', { class: 'button watch-link', href: new URL(user.playing, window.location.href).pathname }, t('Watch their game')) : null))));
    card.hidden = false;
  });
  return card;
}

// What a moderator told this person, on top of every page until dismissed.
export async function showNotices(holder) {
  const account = await currentAccount();
  if (!account) return;
  let notices = [];
  try {
    ({ notices } = await api('GET', '/api/account/notices'));
  } catch {
    return;
  }
  for (const notice of notices) {
    const box = h('div', { class: 'notice card', role: 'alert', dataset: { notice: notice.id } },
      h('strong', null, t('A message from the moderators: ')), notice.text, ' ',
      h('button', {
        type: 'button',
        onclick: async () => {
          await api('DELETE', `/api/account/notices/${encodeURIComponent(notice.id)}`).catch(() => {});
          box.remove();
        },
      }, t('Dismiss')));
    holder.append(box);
  }
}

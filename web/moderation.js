// The moderators' page (/mod, issue 37): the open reports, oldest first,
// each with its actions (warn with a message, a chat timeout, mark as a
// cheater, close the account, dismiss), and the audit log of every action.
// The server decides who is a moderator (`rookery-server admin grant NAME
// moderator`); anyone else is told so.

import { api } from './api.js';
import { h, clear } from './dom.js';
import { playerHref } from './format.js';
import { askToLogIn, currentAccount } from './session.js';
import { when } from './account.js';
import { t } from './i18n.js';

export async function moderationPage(root) {
  document.title = t('Moderation · Rookery');
  const account = await currentAccount();
  if (!account) {
    askToLogIn(root, t('Moderation'), t('Log in with a moderator account.'));
    return;
  }
  // Asked first, so a person who is not a moderator is told so without
  // a refused request.
  const social = await api('GET', '/api/account/social').catch(() => null);
  if (!social || !social.moderator) {
    clear(root, h('section', { class: 'card narrow' },
      h('h1', null, t('Moderation')),
      h('p', { role: 'alert' }, t('Only moderators see this page.'))));
    return;
  }
  const queue = h('div', { id: 'mod-queue', 'aria-live': 'polite' });
  const log = h('div', { id: 'mod-log' });
  clear(root, h('div', { class: 'moderation-page' },
    h('section', { class: 'card', 'aria-labelledby': 'queue-title' },
      h('h1', { id: 'queue-title' }, t('Reports')), queue),
    h('section', { class: 'card', 'aria-labelledby': 'log-title' },
      h('h2', { id: 'log-title' }, t('Audit log')), log)));
  const reload = async () => {
    try {
      const [{ reports }, { actions }] = await Promise.all([api('GET', '/api/mod/reports'), api('GET', '/api/mod/log')]);
      clear(queue, reports.length
        ? h('ol', { class: 'reports' }, reports.map((report) => reportItem(report, reload)))
        : h('p', { class: 'muted' }, t('No open reports.')));
      clear(log, logTable(actions));
    } catch (error) {
      clear(queue, h('p', { class: 'form-error', role: 'alert' }, String(error.message)));
      clear(log);
    }
  };
  await reload();
}

function reportItem(report, reload) {
  const error = h('p', { class: 'form-error', role: 'alert' });
  const text = h('input', { type: 'text', class: 'warn-text', 'aria-label': `Warning to ${report.suspect}`, placeholder: t('Message for a warning') });
  const minutes = h('input', { type: 'number', class: 'timeout-minutes', min: '1', max: '10080', value: '15', 'aria-label': t('Timeout minutes') });
  const act = (action, extra = {}) => async () => {
    error.textContent = '';
    try {
      await api('POST', '/api/mod/actions', { body: { action, report: report.id, ...extra } });
      await reload();
    } catch (failure) {
      error.textContent = String(failure.message);
    }
  };
  const button = (label, action, extra, danger = false) => h('button', {
    type: 'button', class: danger ? 'danger' : '', onclick: () => act(action, extra())(),
  }, label);
  return h('li', { class: 'report card', dataset: { report: report.id, suspect: report.suspect } },
    h('p', null,
      h('a', { href: playerHref(report.suspect) }, report.suspect), ' ',
      h('span', { class: 'report-reason' }, report.reason), t(' · reported by '), report.reporter, ' · ', when(report.created_at)),
    h('p', { class: 'report-text' }, report.text),
    report.game_id ? h('p', null, h('a', { href: `/games/${encodeURIComponent(report.game_id)}` }, t('The game'))) : null,
    h('div', { class: 'field-row' }, text, button(t('Warn'), 'warn', () => ({ text: text.value }))),
    h('div', { class: 'field-row' }, minutes, button(t('Chat timeout'), 'timeout', () => ({ minutes: Number(minutes.value) }))),
    h('div', { class: 'actions' },
      button(t('Mark as cheater'), 'cheater', () => ({}), true),
      button(t('Close account'), 'close', () => ({}), true),
      button(t('Dismiss'), 'dismiss', () => ({}))),
    error);
}

function logTable(actions) {
  if (!actions.length) return h('p', { class: 'muted' }, t('Nothing yet.'));
  return h('table', { class: 'mod-log' },
    h('thead', null, h('tr', null, [t('When'), t('Moderator'), t('Action'), t('Player'), t('Details')].map((title) => h('th', null, title)))),
    h('tbody', null, actions.map((entry) => h('tr', { dataset: { action: entry.action } },
      h('td', null, when(entry.created_at)),
      h('td', null, entry.moderator || 'operator'),
      h('td', null, entry.action),
      h('td', null, entry.target),
      h('td', null, entry.details)))));
}

// Challenges by name (lichess's routes and shapes, server/src/api/
// challenges.rs):
//
// - the tray: the challenges to and from the logged-in person, shown in
//   every tab from the event stream (events.js). An incoming one arrives
//   with a sound, with Accept and Decline (and a reason); an outgoing one
//   can be cancelled; a decline or a cancellation is said in words.
// - the challenge form of a player page: clock, colour, rated or casual,
//   sent as `POST /api/challenge/{name}` (form-encoded, as lichess takes it).
// - the challenge page (/challenges/{id}), where a challenge's `url` leads.
//
// When a challenge becomes a game (`gameStart` with the challenge's id),
// the tab that sent it or accepted it goes to the game; the person's other
// tabs say so with a link rather than leaving their page. A tab remembers
// which challenges it sent or accepted in sessionStorage, which is its own
// and lasts across its page loads. The accepting tab hears of its game
// twice, from its Accept's answer and from the stream's `gameStart`, in
// either order: it goes to the game once (`goToGame`), since a second
// navigation would abort the first. The sending tab, too, may hear of the
// game before the answer to its Send (a bot accepts at once): a start it
// could not place yet is kept, and the answer then goes to the game.

import { api } from './api.js';
import { h, clear } from './dom.js';
import { EventStream } from './events.js';
import { CLOCKS, capitalize, changeText, opposite, playerHref, ratingText } from './format.js';
import { askToLogIn, currentAccount, loginHref, sessionEnded } from './session.js';
import { playSound } from './sound.js';
import { getAccountHint } from './storage.js';
import { t } from './i18n.js';

export const DECLINE_REASONS = [
  ['generic', t('Not accepting challenges now')],
  ['later', t('Not now, ask again later')],
  ['tooFast', t('Too fast for me')],
  ['tooSlow', t('Too slow for me')],
  ['timeControl', t('Not this time control')],
  ['rated', t('Rated games only')],
  ['casual', t('Casual games only')],
];

const OWN_KEY = 'rookery:own-challenges';
// How long a "cancelled" notice stays before it goes by itself (a decline
// and a game start stay until dismissed: the person may have looked away).
const NOTICE_MS = 20000;

function ownChallenges() {
  try {
    const ids = JSON.parse(window.sessionStorage.getItem(OWN_KEY) || '[]');
    return new Set(Array.isArray(ids) ? ids : []);
  } catch {
    return new Set();
  }
}

// This tab sent or accepted challenge `id`: its game start brings this tab
// to the game.
function ownChallenge(id) {
  const ids = ownChallenges();
  ids.add(id);
  try {
    window.sessionStorage.setItem(OWN_KEY, JSON.stringify([...ids].slice(-50)));
  } catch {
    // Storage disabled: the event still shows, with its link.
  }
}

// "5+3 blitz · rated · you play black (drawn at random)".
export function challengeTerms(challenge) {
  const control = challenge.timeControl || {};
  const clock = control.type === 'clock' ? `${control.show} ${challenge.speed || ''}`.trim() : t('No clock');
  const mine = challenge.direction === 'in' ? opposite(challenge.finalColor) : challenge.finalColor;
  const drawn = challenge.color === 'random' ? t(' (drawn at random)') : '';
  return t('{clock} · {rated, select, yes {rated} other {casual}} · you play {side, select, white {white} other {black}}{drawn}', { clock, rated: challenge.rated ? 'yes' : 'no', side: mine, drawn });
}

const userText = (user) => `${user.name} (${ratingText(user.rating, user.provisional)})`;

const onChallengePage = (id) => window.location.pathname === `/challenges/${encodeURIComponent(id)}`;

// The games this page is already on its way to.
const leavingFor = new Set();

// Sends this tab to game `id`, once per page whatever tells it to.
function goToGame(id) {
  if (leavingFor.has(id)) return;
  leavingFor.add(id);
  window.location.assign(`/games/${encodeURIComponent(id)}`);
}

let tray = null;

// The mark at the start of the tab's title while challenges wait.
let titleMark = '';
const MARK = /^\(\d+\) /;
function applyTitleMark() {
  const bare = document.title.replace(MARK, '');
  const wanted = `${titleMark}${bare}`;
  if (document.title !== wanted) document.title = wanted;
}
// A page that sets its title later keeps the mark.
new MutationObserver(applyTitleMark).observe(document.head, { subtree: true, childList: true, characterData: true });

// A browser notification for a challenge arriving while this tab is hidden,
// if the person allowed notifications (the settings panel asks).
function notify(challenge) {
  if (!('Notification' in window) || Notification.permission !== 'granted' || !document.hidden) return;
  try {
    const note = new Notification(t('{name} challenges you', { name: challenge.challenger.name }), { body: challengeTerms(challenge), tag: `challenge-${challenge.id}` });
    note.addEventListener('click', () => {
      window.focus();
      note.close();
    });
  } catch {
    // Some browsers only notify from a service worker: the title still says it.
  }
}

// The tray of the logged-in person: made once per page, after the header.
export function startChallenges(account) {
  if (!tray) tray = new ChallengeTray(account);
  return tray;
}

export function stopChallenges() {
  if (tray) tray.stop();
  tray = null;
}

// The game page tells whether this tab is playing a game now: a game start
// elsewhere is then shown as a link instead of leaving the game.
let playing = false;
export function setPlaying(flag) {
  playing = !!flag;
}

class ChallengeTray {
  constructor(account) {
    this.account = account;
    // id -> { challenge, el }
    this.cards = new Map();
    // Every challenge this tab has shown: its game start is news here.
    this.known = new Map();
    // Games started while this tab did not yet know it had sent their
    // challenge (id -> the notice shown, if any): the answer to Send may
    // come after a quick accept's `gameStart`.
    this.startedEarly = new Map();
    this.el = h('aside', { class: 'challenge-tray', 'aria-label': t('Challenges'), 'aria-live': 'polite', 'aria-relevant': 'additions text' });
    document.body.append(this.el);
    this.stream = new EventStream({
      onEvent: (event) => this.onEvent(event),
      // The session ended (logged out everywhere, expired): the whole page
      // hears it, and the tray goes with the account.
      onLoggedOut: () => sessionEnded(),
    });
    this.expiry = setInterval(() => this.dropExpired(), 10000);
    // What is open now (the stream also opens with it, but only in the
    // leading tab; this tab may have joined later).
    api('GET', '/api/challenge').then((lists) => {
      for (const challenge of [...(lists.in || []), ...(lists.out || [])]) this.show(challenge, { quiet: true });
    }, () => {});
  }

  stop() {
    this.stream.stop();
    clearInterval(this.expiry);
    this.el.remove();
    titleMark = '';
    applyTitleMark();
  }

  onEvent(event) {
    const challenge = event.challenge;
    if (event.type === 'challenge' && challenge) this.show(challenge);
    else if (event.type === 'challengeDeclined' && challenge) this.closed(challenge, 'declined');
    else if (event.type === 'challengeCanceled' && challenge) this.closed(challenge, 'canceled');
    else if (event.type === 'gameStart' && event.game) this.started(event.game);
  }

  // A challenge this tab sent (the POST's answer): shown at once.
  sent(challenge) {
    ownChallenge(challenge.id);
    if (this.startedEarly.has(challenge.id)) {
      const notice = this.startedEarly.get(challenge.id);
      this.startedEarly.delete(challenge.id);
      if (!playing) {
        if (notice) notice.remove();
        goToGame(challenge.id);
      }
      return;
    }
    this.show({ ...challenge, direction: 'out' }, { quiet: true });
  }

  show(challenge, { quiet = false } = {}) {
    if (challenge.status && challenge.status !== 'created') return;
    if (challenge.expiresAt && challenge.expiresAt <= Date.now()) return;
    this.known.set(challenge.id, challenge);
    // The challenge's own page shows it already.
    if (onChallengePage(challenge.id)) return;
    const old = this.cards.get(challenge.id);
    const el = challengeCard(challenge, {
      onAccepted: () => this.remove(challenge.id),
      onClosed: () => this.remove(challenge.id),
    });
    if (old) old.el.replaceWith(el);
    else this.el.prepend(el);
    this.cards.set(challenge.id, { challenge, el });
    if (!old && !quiet && challenge.direction === 'in') {
      playSound('challenge');
      notify(challenge);
    }
    this.markTitle();
  }

  remove(id) {
    const card = this.cards.get(id);
    if (card) card.el.remove();
    this.cards.delete(id);
    this.markTitle();
  }

  // The tab's title starts with the number of challenges waiting for an
  // answer here ("(1) Rookery · Play chess"), so a challenge is seen from
  // another tab; pages that set their own title keep the mark.
  markTitle() {
    const waiting = [...this.cards.values()].filter(({ challenge }) => challenge.direction === 'in').length;
    titleMark = waiting ? `(${waiting}) ` : '';
    applyTitleMark();
  }

  // Declined or cancelled: the other side's doing is said in words; one's
  // own (from another tab) just goes.
  closed(challenge, how) {
    this.remove(challenge.id);
    this.known.delete(challenge.id);
    const theirs = (how === 'declined' && challenge.direction === 'out') || (how === 'canceled' && challenge.direction === 'in');
    if (!theirs) return;
    const text = how === 'declined'
      ? [t('{name} declined your challenge', { name: challenge.destUser.name }), challenge.declineReason ? `: “${challenge.declineReason}”` : '.']
      : [t('{name} cancelled their challenge.', { name: challenge.challenger.name })];
    this.notice(h('p', { class: 'challenge-answer', dataset: { answer: how } }, text), { fades: how === 'canceled' });
  }

  started(game) {
    const id = game.gameId || game.id;
    const challenge = this.known.get(id);
    const own = ownChallenges().has(id);
    // Perhaps this tab's own, its Send not yet answered.
    if (!own) this.startedEarly.set(id, null);
    if (!challenge) return;
    this.known.delete(id);
    this.remove(id);
    const path = `/games/${encodeURIComponent(id)}`;
    // There already, or on the way (this tab's Accept was answered first).
    if (window.location.pathname === path || leavingFor.has(id)) return;
    if ((own || onChallengePage(id)) && !playing) {
      goToGame(id);
      return;
    }
    const other = challenge.direction === 'in' ? challenge.challenger.name : challenge.destUser.name;
    playSound('challenge');
    const notice = this.notice(h('p', null, t('Your game against {name} has started. ', { name: other }), h('a', { href: path }, t('Go to the game'))));
    if (!own) this.startedEarly.set(id, notice);
  }

  notice(content, { fades = false } = {}) {
    const dismiss = h('button', { type: 'button', class: 'small' }, t('Dismiss'));
    const el = h('div', { class: 'challenge-card notice' }, content, h('div', { class: 'actions' }, dismiss));
    dismiss.addEventListener('click', () => el.remove());
    this.el.prepend(el);
    if (fades) setTimeout(() => el.remove(), NOTICE_MS);
    return el;
  }

  dropExpired() {
    const now = Date.now();
    for (const [id, { challenge }] of this.cards) {
      if (challenge.expiresAt && challenge.expiresAt <= now) this.remove(id);
    }
  }
}

// One challenge with its actions: Accept and Decline (with a reason) for
// the one challenged, Cancel for the challenger.
export function challengeCard(challenge, { onAccepted = () => {}, onClosed = () => {} } = {}) {
  const incoming = challenge.direction === 'in';
  const message = h('p', { class: 'form-error', role: 'alert' });
  const title = incoming
    ? h('p', { class: 'challenge-title' }, h('a', { href: playerHref(challenge.challenger.name) }, userText(challenge.challenger)), t(' challenges you'))
    : h('p', { class: 'challenge-title' }, t('Waiting for '), h('a', { href: playerHref(challenge.destUser.name) }, userText(challenge.destUser)),
      t(' to answer your challenge…'));
  const terms = h('p', { class: 'challenge-terms' }, challengeTerms(challenge));
  const other = incoming ? challenge.challenger : challenge.destUser;
  const stakes = challenge.rated && other && other.name ? stakesLine(other.name) : null;
  const actions = h('div', { class: 'actions' });
  const act = async (button, path, form) => {
    message.textContent = '';
    for (const control of actions.querySelectorAll('button, select')) control.disabled = true;
    try {
      await api('POST', `/api/challenge/${encodeURIComponent(challenge.id)}/${path}`, { form });
      return true;
    } catch (error) {
      message.textContent = error.message;
      for (const control of actions.querySelectorAll('button, select')) control.disabled = false;
      button.focus();
      return false;
    }
  };
  if (incoming) {
    // Decline asks for a reason first (lichess's list), in the card.
    const accept = h('button', { type: 'button', class: 'primary' }, t('Accept'));
    const decline = h('button', { type: 'button', 'aria-expanded': 'false' }, t('Decline…'));
    const reasonId = `decline-reason-${challenge.id}`;
    const reason = h('select', { id: reasonId }, DECLINE_REASONS.map(([key, label]) => h('option', { value: key }, label)));
    const send = h('button', { type: 'button', class: 'danger' }, t('Decline'));
    const back = h('button', { type: 'button' }, t('Back'));
    const reasons = h('div', { class: 'decline-row', hidden: true },
      h('label', { for: reasonId }, t('Reason')), reason, send, back);
    const asking = (show) => {
      reasons.hidden = !show;
      accept.hidden = show;
      decline.hidden = show;
      decline.setAttribute('aria-expanded', String(show));
      (show ? reason : decline).focus();
    };
    accept.addEventListener('click', async () => {
      ownChallenge(challenge.id);
      if (await act(accept, 'accept')) {
        onAccepted();
        goToGame(challenge.id);
      }
    });
    decline.addEventListener('click', () => asking(true));
    back.addEventListener('click', () => asking(false));
    send.addEventListener('click', async () => {
      if (await act(send, 'decline', { reason: reason.value })) onClosed();
    });
    actions.append(accept, decline, reasons);
  } else {
    const cancel = h('button', { type: 'button', class: 'small' }, t('Cancel challenge'));
    cancel.addEventListener('click', async () => {
      if (await act(cancel, 'cancel')) onClosed();
    });
    actions.append(cancel);
  }
  return h('div', {
    class: `challenge-card ${incoming ? 'incoming' : 'outgoing'}`,
    dataset: { challengeId: challenge.id },
    role: 'group',
    'aria-label': incoming ? t('Challenge from {name}', { name: challenge.challenger.name }) : t('Challenge to {name}', { name: challenge.destUser.name }),
  }, title, terms, stakes, actions, message);
}

// The player page's "Challenge" button and form, for a logged-in visitor
// on someone else's page.
export function challengeSection(name) {
  const section = h('div', { class: 'challenge-section' });
  currentAccount().then((account) => {
    if (!account) {
      clear(section, h('a', { class: 'button', href: loginHref(), id: 'challenge-login' }, t('Log in to challenge {name}', { name })));
      return;
    }
    if (account.name.toLowerCase() === name.toLowerCase()) return;
    const open = h('button', { type: 'button', class: 'primary', id: 'challenge-button', 'aria-expanded': 'false' }, `Challenge ${name}`);
    const form = challengeForm(name, (challenge) => {
      form.hidden = true;
      open.setAttribute('aria-expanded', 'false');
      open.hidden = false;
      sentNote.hidden = false;
      sentNote.textContent = t('Challenge sent to {name}: you go to the game when they accept.', { name });
      startChallenges(account).sent(challenge);
    });
    form.hidden = true;
    const sentNote = h('p', { class: 'muted', id: 'challenge-sent', hidden: true });
    open.addEventListener('click', () => {
      const show = form.hidden;
      form.hidden = !show;
      open.setAttribute('aria-expanded', String(show));
      sentNote.hidden = true;
      if (show) form.querySelector('select').focus();
    });
    clear(section, open, form, sentNote);
  });
  return section;
}

// "If rated: win +8, draw ±0, loss −8", what the logged-in person stands
// to win or lose against `name` (GET /api/players/{name}/stakes); filled in
// when the answer comes, empty if there is none.
export function stakesLine(name) {
  const line = h('p', { class: 'stakes muted', dataset: { stakesFor: name } });
  api('GET', `/api/players/${encodeURIComponent(name)}/stakes`).then((stakes) => {
    const you = stakes.you;
    line.textContent = t('Rating at stake if rated (you {rating}, {name} {theirs}): win {win}, draw {draw}, loss {loss}', {
      rating: String(you.rating), name: stakes.opponent.name, theirs: String(stakes.opponent.rating), win: changeText(you.win), draw: changeText(you.draw), loss: changeText(you.loss),
    });
  }, () => {});
  return line;
}

// The challenge dialog: the same form as the player page's, over any page
// (search results, the lobby's online list and "challenge by name", game
// lists). A visitor who is not logged in is asked to log in first.
export async function openChallengeDialog(name) {
  const account = await currentAccount();
  const close = h('button', { type: 'button', class: 'small', id: 'challenge-dialog-close' }, t('Close'));
  const dialog = h('dialog', { class: 'challenge-dialog card', id: 'challenge-dialog', 'aria-labelledby': 'challenge-dialog-title' },
    h('h2', { id: 'challenge-dialog-title' }, `Challenge ${name}`));
  const done = () => {
    dialog.close();
    dialog.remove();
  };
  close.addEventListener('click', done);
  dialog.addEventListener('close', () => dialog.remove());
  if (!account) {
    dialog.append(h('p', null, t('Log in to challenge {name}.', { name })),
      h('p', { class: 'actions' }, h('a', { class: 'button primary', href: loginHref() }, t('Log in')), close));
  } else if (account.name.toLowerCase() === name.toLowerCase()) {
    dialog.append(h('p', null, t('That is you: challenge someone else.')), h('p', { class: 'actions' }, close));
  } else {
    const form = challengeForm(name, (challenge) => {
      startChallenges(account).sent(challenge);
      done();
    });
    dialog.append(form, h('p', { class: 'actions' }, close));
  }
  document.body.append(dialog);
  dialog.showModal();
  return dialog;
}

// A small "Challenge" button for `name` (hidden for the person's own name).
export function challengeButton(name, { label = t('Challenge') } = {}) {
  const hint = getAccountHint();
  if (hint && hint.name && hint.name.toLowerCase() === String(name).toLowerCase()) return null;
  return h('button', {
    type: 'button', class: 'small challenge-name', dataset: { challenge: name }, 'aria-label': `Send ${name} a challenge`,
    onclick: (event) => {
      event.preventDefault();
      event.stopPropagation();
      openChallengeDialog(name);
    },
  }, label);
}

function challengeForm(name, onSent) {
  const radio = (group, value, label, checked) => h('label', { class: 'choice' },
    h('input', { type: 'radio', name: group, value, checked }), h('span', null, label));
  const minutes = h('input', { type: 'number', name: 'minutes', min: '0', max: '180', step: '0.5', value: '5' });
  const increment = h('input', { type: 'number', name: 'increment', min: '0', max: '180', step: '1', value: '3' });
  const custom = h('div', { class: 'field-row', hidden: true },
    h('label', { class: 'field' }, h('span', null, t('Minutes')), minutes),
    h('label', { class: 'field' }, h('span', null, t('Increment (seconds)')), increment));
  const clock = h('select', { name: 'clock', id: 'challenge-clock' },
    CLOCKS.map(([value, label]) => h('option', { value, selected: value === '300+3' }, label)));
  clock.addEventListener('change', () => { custom.hidden = clock.value !== 'custom'; });
  const message = h('p', { class: 'form-error', role: 'alert' });
  const submit = h('button', { type: 'submit', class: 'primary' }, t('Send challenge'));
  const form = h('form', { class: 'new-game challenge-form', id: 'challenge-form', 'aria-label': `Challenge ${name}`, novalidate: true },
    h('label', { class: 'field' }, h('span', null, t('Clock')), clock),
    custom,
    h('fieldset', { class: 'segmented' }, h('legend', null, t('You play')),
      radio('challenge-color', 'white', t('White'), false),
      radio('challenge-color', 'random', t('Random'), true),
      radio('challenge-color', 'black', t('Black'), false)),
    h('label', { class: 'field' }, h('span', null, t('Variant')),
      h('select', { name: 'challenge-variant', id: 'challenge-variant' },
        h('option', { value: 'standard' }, t('Standard')),
        h('option', { value: 'chess960' }, t('Chess960 (a start drawn from the 960)')))),
    h('fieldset', { class: 'segmented' }, h('legend', null, t('Game')),
      radio('challenge-rated', 'true', t('Rated'), true),
      radio('challenge-rated', 'false', t('Casual'), false)),
    stakesLine(name),
    message,
    submit);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.textContent = '';
    const fields = {
      color: form.elements['challenge-color'].value,
      rated: form.elements['challenge-rated'].value,
    };
    if (form.elements['challenge-variant'].value === 'chess960') fields.variant = 'chess960';
    if (clock.value === 'custom') {
      const limit = Math.round(Number(minutes.value) * 60);
      const plus = Math.round(Number(increment.value));
      if (!Number.isFinite(limit) || !Number.isFinite(plus) || limit < 0 || plus < 0 || (limit === 0 && plus === 0)) {
        message.textContent = t('Enter a clock of at least some minutes or an increment.');
        return;
      }
      fields['clock.limit'] = String(limit);
      fields['clock.increment'] = String(plus);
    } else if (clock.value !== 'none') {
      const [limit, plus] = clock.value.split('+');
      fields['clock.limit'] = limit;
      fields['clock.increment'] = plus;
    }
    submit.disabled = true;
    try {
      const challenge = await api('POST', `/api/challenge/${encodeURIComponent(name)}`, { form: fields });
      onSent(challenge);
    } catch (error) {
      message.textContent = t('Could not send the challenge: {reason}', { reason: error.message });
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

// /challenges/{id}: one challenge, for its challenger or the one challenged.
export async function challengePage(root, id) {
  document.title = t('Challenge · Rookery');
  const account = await currentAccount();
  if (!account) {
    askToLogIn(root, t('Challenge'), t('Log in to see this challenge.'));
    return;
  }
  let challenge;
  try {
    challenge = await api('GET', `/api/challenge/${encodeURIComponent(id)}/show`);
  } catch (error) {
    clear(root, h('section', { class: 'card narrow' },
      h('h1', null, t('Challenge not found')),
      h('p', null, error.status === 404 ? t('There is no such challenge of yours. It may have been for someone else.') : error.message)));
    return;
  }
  const game = challenge.gameId || (challenge.status === 'accepted' ? challenge.id : null);
  let body;
  if (challenge.status === 'created') {
    body = challengeCard(challenge, { onClosed: () => window.location.reload() });
  } else {
    const words = {
      accepted: t('This challenge was accepted.'),
      declined: challenge.declineReason ? t('This challenge was declined: “{reason}”', { reason: challenge.declineReason }) : t('This challenge was declined.'),
      canceled: t('This challenge was cancelled.'),
      expired: t('This challenge expired before it was answered.'),
    };
    body = h('div', null,
      h('p', { class: 'challenge-terms' }, challengeTerms(challenge)),
      h('p', { id: 'challenge-status' }, words[challenge.status] || capitalize(String(challenge.status))),
      game ? h('p', null, h('a', { class: 'button primary', href: `/games/${encodeURIComponent(game)}` }, t('Go to the game'))) : null);
  }
  const between = `${challenge.challenger.name} v ${challenge.destUser.name}`;
  document.title = `Challenge: ${between} · Rookery`;
  clear(root, h('section', { class: 'card narrow challenge-page' }, h('h1', null, `Challenge: ${between}`), body));
}

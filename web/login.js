// The log-in and sign-up pages (/login, /signup): a name and a password,
// and the server's refusals in words (wrong name or password, a weak
// password, a taken name, "too many tries, wait N s"). Both return to the
// page named by `?back=`.

import { h, clear } from './dom.js';
import { accountErrorText, backPath, currentAccount, logIn, signUp } from './session.js';
import { getPlayer } from './storage.js';
import { t } from './i18n.js';

const NAME_PATTERN = /^[A-Za-z0-9_-]{1,20}$/;

export async function loginPage(root) {
  return accountForm(root, 'login');
}

export async function signupPage(root) {
  return accountForm(root, 'signup');
}

async function accountForm(root, kind) {
  const signing = kind === 'signup';
  document.title = signing ? t('Sign up · Rookery') : t('Log in · Rookery');
  const back = backPath();
  const account = await currentAccount();
  if (account) {
    clear(root, h('section', { class: 'card narrow' },
      h('h1', null, t('You are logged in as {name}', { name: account.name })),
      h('p', { class: 'actions' },
        h('a', { class: 'button primary', href: back }, t('Continue')),
        h('a', { class: 'button', href: '/account' }, t('Your account')))));
    return;
  }
  const query = back === '/' ? '' : `?back=${encodeURIComponent(back)}`;
  const name = h('input', {
    type: 'text', id: 'account-name', name: 'username', maxlength: '20', autocomplete: 'username',
    autocapitalize: 'off', spellcheck: 'false', required: true,
  });
  const password = h('input', {
    type: 'password', id: 'account-password', name: 'password', autocomplete: signing ? 'new-password' : 'current-password',
    required: true, minlength: signing ? '8' : null,
  });
  const message = h('p', { class: 'form-error', role: 'alert', id: 'account-error' });
  const submit = h('button', { type: 'submit', class: 'primary' }, signing ? t('Sign up') : t('Log in'));
  const form = h('form', { class: 'account-form', novalidate: true },
    h('label', { class: 'field' }, h('span', null, t('Name')), name),
    h('label', { class: 'field' }, h('span', null, t('Password')), password),
    signing ? h('p', { class: 'muted hint' }, t('At least 8 characters, not a common password and not your name.')) : null,
    message,
    submit,
    signing ? null : h('p', { class: 'forgot' }, h('a', { href: '/forgot-password', id: 'forgot-link' }, t('Forgot password?'))));
  for (const input of [name, password]) input.addEventListener('input', () => { message.textContent = ''; });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.textContent = '';
    const typed = name.value.trim();
    if (!NAME_PATTERN.test(typed)) {
      message.textContent = t('Names are 1–20 letters, digits, _ or -.');
      name.focus();
      return;
    }
    if (!password.value) {
      message.textContent = t('Enter your password.');
      password.focus();
      return;
    }
    submit.disabled = true;
    try {
      await (signing ? signUp : logIn)(typed, password.value);
      window.location.assign(back);
    } catch (error) {
      submit.disabled = false;
      message.textContent = refusal(error, typed, signing);
    }
  });

  const player = getPlayer();
  clear(root, h('section', { class: 'card narrow account-card' },
    h('h1', null, signing ? t('Sign up') : t('Log in')),
    h('p', { class: 'muted' }, signing
      ? t('An account keeps your name, rating and games on every device. You can play without one.')
      : t('Log in to find your games, rating and challenges on this device.')),
    form,
    h('p', null, signing
      ? [t('Already have an account? '), h('a', { href: `/login${query}` }, t('Log in'))]
      : [t('New here? '), h('a', { href: `/signup${query}` }, t('Sign up')), t(' — or just '), h('a', { href: '/' }, t('play without an account')), '.']),
    player ? h('p', { class: 'muted', id: 'claim-hint' },
      `This browser plays as ${player.name} without a password. To keep that name, `,
      h('a', { href: '/#your-name' }, t('set a password for it in the lobby')), '.') : null));
  name.focus();
}

function refusal(error, typed, signing) {
  const player = getPlayer();
  if (signing && error.code === 'name_taken' && player && player.name.toLowerCase() === typed.toLowerCase()) {
    return `${player.name} is this browser’s name already: set a password for it in the lobby instead.`;
  }
  return accountErrorText(error);
}

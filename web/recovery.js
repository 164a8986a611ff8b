// Getting an account back (issue 36): "Forgot password?" (/forgot-password)
// mails a single-use link to the account's verified address; the link opens
// /reset-password?token=… to choose a new password (which logs the account
// out everywhere); /verify-email?token=… confirms an address added at
// /account. A server that sends no mail says so on the form, and points to
// its operator (`rookery-server admin reset-password NAME`).

import { api } from './api.js';
import { h, clear } from './dom.js';
import { accountErrorText, forgetSession } from './session.js';
import { t } from './i18n.js';

const tokenOf = () => new URLSearchParams(window.location.search).get('token') || '';

// Whether this server sends mail (GET /api/account/recovery).
export async function mailEnabled() {
  try {
    return (await api('GET', '/api/account/recovery')).mail === true;
  } catch {
    return false;
  }
}

export async function forgotPasswordPage(root) {
  document.title = t('Forgot password · Rookery');
  const mail = await mailEnabled();
  if (!mail) {
    clear(root, h('section', { class: 'card narrow account-card', id: 'forgot-card' },
      h('h1', null, t('Forgot password')),
      h('p', { id: 'no-mail' }, t('This server sends no e-mail, so it cannot mail you a reset link.')),
      h('p', null, t('Ask the person who runs it to reset your password: they run '),
        h('code', null, t('rookery-server admin reset-password NAME')), t(' and give you a new one.')),
      h('p', null, h('a', { href: '/login' }, t('Back to log in')))));
    return;
  }
  const login = h('input', {
    type: 'text', id: 'forgot-login', name: 'login', maxlength: '254', autocomplete: 'username', autocapitalize: 'off', spellcheck: 'false', required: true,
  });
  const message = h('p', { class: 'form-error', role: 'alert', id: 'forgot-error' });
  const submit = h('button', { type: 'submit', class: 'primary' }, t('Send me a reset link'));
  const form = h('form', { class: 'account-form', novalidate: true },
    h('label', { class: 'field' }, h('span', null, t('Your name or e-mail address')), login),
    message,
    submit);
  const card = h('section', { class: 'card narrow account-card', id: 'forgot-card' },
    h('h1', null, t('Forgot password')),
    h('p', { class: 'muted' }, t('If your account has a verified e-mail address, we mail it a link to choose a new password. The link works once, for an hour.')),
    form,
    h('p', null, h('a', { href: '/login' }, t('Back to log in'))));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.textContent = '';
    const typed = login.value.trim();
    if (!typed) {
      message.textContent = t('Enter your name or your e-mail address.');
      login.focus();
      return;
    }
    submit.disabled = true;
    try {
      await api('POST', '/api/account/forgot', { body: { login: typed } });
      clear(card, h('h1', null, t('Check your mail')),
        h('p', { id: 'forgot-sent', role: 'status' }, t('If an account with that name or address has a verified e-mail address, a reset link is on its way to it. It works once, for an hour.')),
        h('p', null, h('a', { href: '/login' }, t('Back to log in'))));
    } catch (error) {
      submit.disabled = false;
      message.textContent = accountErrorText(error);
    }
  });
  clear(root, card);
  login.focus();
}

export async function resetPasswordPage(root) {
  document.title = t('New password · Rookery');
  const token = tokenOf();
  let whose = null;
  try {
    whose = token ? (await api('GET', `/api/account/reset?token=${encodeURIComponent(token)}`)).name : null;
  } catch {
    whose = null;
  }
  if (!whose) {
    clear(root, h('section', { class: 'card narrow account-card' },
      h('h1', null, t('This link does not work')),
      h('p', { id: 'reset-unusable' }, t('A reset link works once, for an hour. This one is unknown, used already or expired.')),
      h('p', { class: 'actions' }, h('a', { class: 'button primary', href: '/forgot-password' }, t('Ask for a new link')))));
    return;
  }
  const password = h('input', {
    type: 'password', id: 'reset-password', name: 'password', autocomplete: 'new-password', minlength: '8', required: true,
  });
  const message = h('p', { class: 'form-error', role: 'alert', id: 'reset-error' });
  const submit = h('button', { type: 'submit', class: 'primary' }, t('Set the new password'));
  const form = h('form', { class: 'account-form', novalidate: true },
    h('input', { type: 'text', name: 'username', autocomplete: 'username', value: whose, hidden: true, readonly: true }),
    h('label', { class: 'field' }, h('span', null, t('New password')), password),
    h('p', { class: 'muted hint' }, t('At least 8 characters, not a common password and not your name.')),
    message,
    submit);
  const card = h('section', { class: 'card narrow account-card' },
    h('h1', null, t('A new password for {name}', { name: whose })),
    h('p', { class: 'muted' }, t('Setting it logs the account out on every device.')),
    form);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.textContent = '';
    submit.disabled = true;
    try {
      await api('POST', '/api/account/reset', { body: { token, password: password.value } });
      // This browser's session (if any) ended with the others.
      forgetSession();
      clear(card, h('h1', null, t('Password changed')),
        h('p', { id: 'reset-done', role: 'status' }, t('Every session of {name} has ended. Log in with the new password.', { name: whose })),
        h('p', { class: 'actions' }, h('a', { class: 'button primary', href: '/login' }, t('Log in'))));
    } catch (error) {
      submit.disabled = false;
      message.textContent = accountErrorText(error);
    }
  });
  clear(root, card);
  password.focus();
}

export async function verifyEmailPage(root) {
  document.title = t('Confirm your address · Rookery');
  const token = tokenOf();
  let text;
  let ok = false;
  try {
    await api('POST', '/api/account/email/verify', { body: { token } });
    ok = true;
    text = t('Your e-mail address is confirmed: a forgotten password can now be reset by mail.');
  } catch (error) {
    text = error.code === 'email_taken'
      ? t('This address already belongs to another account.')
      : t('This link does not work: it is unknown, used already or expired. Add the address again at your account page.');
  }
  clear(root, h('section', { class: 'card narrow account-card' },
    h('h1', null, ok ? t('Address confirmed') : t('Not confirmed')),
    h('p', { id: 'verify-result', dataset: { ok: String(ok) } }, text),
    h('p', null, h('a', { href: '/account' }, t('Your account')))));
}

// The account page's e-mail section: the address (verified or waiting),
// a field to add or change it, and "remove".
export function emailSection(account) {
  const section = h('section', { class: 'card', id: 'email-section' }, h('h2', null, t('E-mail address')));
  const status = h('p', { id: 'email-status' });
  const input = h('input', { type: 'email', id: 'email-input', name: 'email', maxlength: '254', autocomplete: 'email', value: account.email || '' });
  const message = h('p', { class: 'form-error', role: 'alert', id: 'email-error' });
  const note = h('p', { class: 'muted', id: 'email-note', role: 'status' });
  const save = h('button', { type: 'submit', class: 'primary' }, t('Send a confirmation link'));
  const remove = h('button', { type: 'button', id: 'email-remove', hidden: !account.email && !account.email_pending }, t('Remove the address'));
  const form = h('form', { class: 'account-form', novalidate: true },
    h('label', { class: 'field' }, h('span', null, t('Address')), input), message, h('div', { class: 'actions' }, save, remove), note);
  const drawStatus = (email, pending) => {
    status.textContent = email
      ? t('Confirmed: {email}. A reset link for a forgotten password goes there.', { email })
      : t('No confirmed address: a forgotten password cannot be reset by mail.');
    if (pending) status.textContent += t(' Waiting for confirmation: {email}.', { email: pending });
  };
  drawStatus(account.email, account.email_pending);
  mailEnabled().then((mail) => {
    if (mail) return;
    save.disabled = true;
    note.textContent = t('This server sends no e-mail: an address cannot be confirmed here.');
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    message.textContent = '';
    note.textContent = '';
    const email = input.value.trim();
    if (!email) {
      message.textContent = t('Enter an e-mail address.');
      return;
    }
    save.disabled = true;
    try {
      await api('PUT', '/api/account/email', { body: { email } });
      note.textContent = t('A confirmation link is on its way to {email}. The address counts once you open it.', { email });
      drawStatus(account.email, email);
      remove.hidden = false;
    } catch (error) {
      message.textContent = accountErrorText(error);
    } finally {
      save.disabled = false;
    }
  });
  remove.addEventListener('click', async () => {
    message.textContent = '';
    try {
      await api('PUT', '/api/account/email', { body: { email: null } });
      account.email = null;
      drawStatus(null, null);
      input.value = '';
      remove.hidden = true;
      note.textContent = t('The address is removed.');
    } catch (error) {
      message.textContent = accountErrorText(error);
    }
  });
  section.append(status, form);
  return section;
}

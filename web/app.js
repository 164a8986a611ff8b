// Entry point: the server serves this one page for /, /games/{id}, /watch,
// /scoreboard, /players/{name}, /login, /signup, /account, /me/games,
// /forgot-password, /reset-password, /verify-email, /help,
// /challenges/{id}, /mod (moderators), /teams, /team/{id} and /swiss/{id};
// the path decides which page to draw.

import { accountPage } from './account.js';
import { analysisBoardPage } from './analysisboard.js';
import { arenaPage, arenasPage } from './arena.js';
import { challengePage, startChallenges, stopChallenges } from './challenges.js';
import { h, clear } from './dom.js';
import { gamePage } from './game.js';
import { lobbyPage } from './lobby.js';
import { loginPage, signupPage } from './login.js';
import { myGamesPage } from './mygames.js';
import { playerPage } from './player.js';
import { forgotPasswordPage, resetPasswordPage, verifyEmailPage } from './recovery.js';
import { helpPage } from './help.js';
import { searchControl } from './search.js';
import { scoreboardPage } from './scoreboard.js';
import { accountControl, currentAccount, onAccountChange } from './session.js';
import { applyLooks, settingsControl } from './settings.js';
import { moderationPage } from './moderation.js';
import { showNotices } from './social.js';
import { swissPage } from './swiss.js';
import { teamPage, teamsPage } from './teams.js';
import { watchPage } from './watch.js';
import { t } from './i18n.js';

function route(root, path) {
  const match = path.match(/^\/games\/([^/]+)$/);
  if (match) return { nav: null, page: 'game', run: () => gamePage(root, decodeSegment(match[1])) };
  if (path === '/' || path === '/index.html') return { nav: '/', run: () => lobbyPage(root) };
  if (path === '/watch') return { nav: '/watch', run: () => watchPage(root) };
  if (path === '/arenas') return { nav: '/arenas', run: () => arenasPage(root) };
  const arena = path.match(/^\/arenas\/([^/]+)$/);
  if (arena) return { nav: '/arenas', run: () => arenaPage(root, decodeSegment(arena[1])) };
  if (path === '/analysis') return { nav: '/analysis', run: () => analysisBoardPage(root) };
  if (path === '/scoreboard') return { nav: '/scoreboard', run: () => scoreboardPage(root) };
  const player = path.match(/^\/players\/([^/]+)$/);
  if (player) return { nav: null, run: () => playerPage(root, decodeURIComponent(player[1])) };
  if (path === '/login') return { nav: null, run: () => loginPage(root) };
  if (path === '/signup') return { nav: null, run: () => signupPage(root) };
  if (path === '/forgot-password') return { nav: null, run: () => forgotPasswordPage(root) };
  if (path === '/reset-password') return { nav: null, run: () => resetPasswordPage(root) };
  if (path === '/verify-email') return { nav: null, run: () => verifyEmailPage(root) };
  if (path === '/help') return { nav: null, run: () => helpPage(root) };
  if (path === '/account') return { nav: null, run: () => accountPage(root) };
  if (path === '/me/games') return { nav: null, run: () => myGamesPage(root) };
  if (path === '/mod') return { nav: null, run: () => moderationPage(root) };
  if (path === '/teams') return { nav: '/teams', run: () => teamsPage(root) };
  const team = path.match(/^\/team\/([^/]+)$/);
  if (team) return { nav: null, run: () => teamPage(root, decodeSegment(team[1])) };
  const swiss = path.match(/^\/swiss\/([^/.]+)$/);
  if (swiss) return { nav: null, run: () => swissPage(root, decodeSegment(swiss[1])) };
  const challenge = path.match(/^\/challenges\/([^/]+)$/);
  if (challenge) return { nav: null, run: () => challengePage(root, decodeSegment(challenge[1])) };
  return {
    nav: null,
    run: async () => {
      document.title = t('Page not found · Rookery');
      clear(root, h('section', { class: 'card narrow not-found' },
        h('h1', null, t('Page not found')),
        h('p', null, t('There is no page at this address. The link may be mistyped, or the page may have moved.')),
        h('p', { class: 'actions' }, h('a', { class: 'button primary', href: '/' }, t('Back to the lobby')))));
    },
  };
}

// A game id from the address; a malformed escape (`/games/%E0%A4%A`) is kept
// as typed, so the server answers "not found" for it like any unknown id.
function decodeSegment(segment) {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

// Board colours and pieces first, so no board is drawn in the wrong ones.
applyLooks();
// The page's own HTML (index.html) in the page's language.
for (const el of document.querySelectorAll('.skip-link, .site-nav a, .site-footer a, main > .loading')) el.textContent = t(el.textContent.trim());
document.querySelector('.brand').setAttribute('aria-label', t('Rookery home'));
document.querySelector('.site-nav').setAttribute('aria-label', t('Main'));
document.querySelector('.site-header').append(searchControl(), accountControl(), settingsControl());

// A logged-in person hears of challenges on every page.
let listening = null;
const challengesFor = (account) => {
  const name = account ? account.name : null;
  if (name === listening) return;
  listening = name;
  stopChallenges();
  if (account) startChallenges(account);
};
currentAccount().then(challengesFor);
onAccountChange(challengesFor);

const root = document.getElementById('app');
// What a moderator told this person, above the page until dismissed.
const notices = document.createElement('div');
notices.className = 'notices';
root.before(notices);
showNotices(notices);
const path = window.location.pathname.replace(/\/+$/, '') || '/';
const { nav, page, run } = route(root, path);
// A game page on a phone keeps its height for the board (style.css leaves
// the header's search out there).
if (page) document.body.dataset.page = page;
for (const link of document.querySelectorAll('.site-nav a')) {
  if (link.getAttribute('href') === nav) link.setAttribute('aria-current', 'page');
}
run().catch((error) => {
  clear(root, h('section', { class: 'card narrow' },
    h('h1', null, t('Something went wrong')),
    h('p', null, error && error.message ? error.message : String(error)),
    h('p', null, h('a', { href: window.location.pathname }, t('Reload')))));
});

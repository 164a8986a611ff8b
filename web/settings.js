// How the boards look in this browser: the colours of the squares and the
// piece set, chosen in a small panel opened from the site header and
// remembered as preferences (storage.js: rookery:pref:board-theme and
// rookery:pref:piece-set). A theme is an attribute on <html>
// (data-board-theme) that style.css turns into the square colours; the
// piece set is drawn by pieces.js.

import { h, pathIcon } from './dom.js';
import { languageSetting } from './languages.js';
import { PIECE_SETS, currentPieceSet, pieceElement, setPieceSet } from './pieces.js';
import { getPreference, savePreference } from './storage.js';
import { t } from './i18n.js';

export const BOARD_THEMES = { wood: t('Wood'), green: t('Green'), blue: t('Blue'), grey: t('Grey') };
// The page's colours (issue 36): the system's choice, or always light or dark.
export const COLOR_SCHEMES = { system: t('System'), light: t('Light'), dark: t('Dark') };
const DEFAULT_THEME = 'wood';
const DEFAULT_SET = 'classic';

function chosen(name, known, fallback) {
  const value = getPreference(name);
  return typeof value === 'string' && Object.hasOwn(known, value) ? value : fallback;
}

function applyTheme(theme) {
  document.documentElement.dataset.boardTheme = theme;
}

// The style sheets' dark rules are `@media (prefers-color-scheme: dark)`
// blocks. "Light" or "Dark" rewrites each such block's condition (kept here
// to undo it) to never or always; "System" puts it back. The sheets stay as
// written, and so does every rule in them.
const darkConditions = new WeakMap();
const DARK = '(prefers-color-scheme: dark)';

function darkRules() {
  const rules = [];
  const visit = (list) => {
    for (const rule of list) {
      if (rule instanceof CSSMediaRule) {
        if (!darkConditions.has(rule) && rule.media.mediaText.includes(DARK)) darkConditions.set(rule, rule.media.mediaText);
        if (darkConditions.has(rule)) rules.push(rule);
      }
    }
  };
  for (const sheet of document.styleSheets) {
    try {
      visit(sheet.cssRules);
    } catch {
      // A sheet of another origin: not ours to read.
    }
  }
  return rules;
}

export function applyColorScheme(scheme) {
  const root = document.documentElement;
  if (scheme === 'system') delete root.dataset.colorScheme;
  else root.dataset.colorScheme = scheme;
  root.style.colorScheme = scheme === 'system' ? '' : scheme;
  for (const rule of darkRules()) {
    const original = darkConditions.get(rule);
    rule.media.mediaText = scheme === 'system' ? original
      : scheme === 'dark' ? original.replace(DARK, '(min-width: 0px)') : 'not all';
  }
}

// Called once at start, before any board is drawn.
export function applyLooks() {
  applyColorScheme(chosen('color-scheme', COLOR_SCHEMES, 'system'));
  applyTheme(chosen('board-theme', BOARD_THEMES, DEFAULT_THEME));
  setPieceSet(chosen('piece-set', PIECE_SETS, DEFAULT_SET));
}

// The header's settings button and the panel it opens.
export function settingsControl() {
  const panelId = 'board-settings';
  const button = h('button', {
    type: 'button', class: 'settings-button', 'aria-label': t('Board settings'), title: t('Board settings'),
    'aria-expanded': 'false', 'aria-controls': panelId,
  }, gear());
  const group = (legend, name, options, current, onPick) => h('fieldset', { class: 'segmented' },
    h('legend', null, legend),
    Object.entries(options).map(([value, label]) => {
      const input = h('input', { type: 'radio', name, value, checked: value === current });
      input.addEventListener('change', () => onPick(value));
      return h('label', { class: 'choice' }, input, h('span', null, label));
    }));
  const preview = h('div', { class: 'settings-preview', 'aria-hidden': 'true' },
    ['wK', 'bQ', 'wR', 'bB', 'wN', 'bP'].map((code, index) => h('div', { class: `sq ${index % 2 ? 'dark' : 'light'}` },
      pieceElement(code, { automation: false }))));
  const done = h('button', { type: 'button', class: 'primary' }, t('Done'));
  const notify = h('button', { type: 'button', id: 'notify-button', class: 'small' }, t('Notify me of challenges'));
  const notifyState = h('span', { class: 'muted', id: 'notify-state' });
  const drawNotify = () => {
    const supported = 'Notification' in window;
    notify.hidden = !supported || Notification.permission !== 'default';
    notifyState.textContent = !supported ? ''
      : Notification.permission === 'granted' ? t('Challenges arriving in a hidden tab show a notification.')
        : Notification.permission === 'denied' ? t('Notifications are blocked in this browser.') : '';
  };
  notify.addEventListener('click', async () => {
    await Notification.requestPermission().catch(() => {});
    drawNotify();
  });
  drawNotify();
  const panel = h('div', { class: 'settings-panel', id: panelId, role: 'dialog', 'aria-label': t('Board settings'), hidden: true },
    h('h2', null, t('Page')),
    group(t('Colours'), 'color-scheme', COLOR_SCHEMES, chosen('color-scheme', COLOR_SCHEMES, 'system'), (scheme) => {
      savePreference('color-scheme', scheme);
      applyColorScheme(scheme);
    }),
    h('p', { class: 'notify-row' }, notify, notifyState),
    h('h2', null, t('Board')),
    group(t('Board colours'), 'board-theme', BOARD_THEMES, document.documentElement.dataset.boardTheme || DEFAULT_THEME, (theme) => {
      savePreference('board-theme', theme);
      applyTheme(theme);
    }),
    group(t('Pieces'), 'piece-set', Object.fromEntries(Object.entries(PIECE_SETS).map(([key, set]) => [key, set.label])), currentPieceSet(), (set) => {
      savePreference('piece-set', set);
      setPieceSet(set);
    }),
    preview,
    languageSetting(),
    h('div', { class: 'actions' }, done));

  const open = (show) => {
    panel.hidden = !show;
    button.setAttribute('aria-expanded', String(show));
    if (show) (panel.querySelector('input:checked') || done).focus();
  };
  button.addEventListener('click', () => open(panel.hidden));
  done.addEventListener('click', () => {
    open(false);
    button.focus();
  });
  panel.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape') return;
    event.stopPropagation();
    open(false);
    button.focus();
  });
  // A click elsewhere on the page closes it, as a menu would.
  document.addEventListener('pointerdown', (event) => {
    if (!panel.hidden && event.target instanceof Node && !wrapper.contains(event.target)) open(false);
  });
  const wrapper = h('div', { class: 'settings' }, button, panel);
  return wrapper;
}

// A cog: eight teeth around a ring.
function gear() {
  const teeth = [];
  for (let i = 0; i < 8; i++) {
    const a = (i * Math.PI) / 4;
    const point = (r, da) => `${(12 + r * Math.cos(a + da)).toFixed(2)} ${(12 + r * Math.sin(a + da)).toFixed(2)}`;
    teeth.push(`${i ? 'L' : 'M'}${point(7.5, -0.32)} L${point(10.5, -0.2)} L${point(10.5, 0.2)} L${point(7.5, 0.32)}`);
  }
  const ring = 'M12 8.5 A3.5 3.5 0 1 0 12 15.5 A3.5 3.5 0 1 0 12 8.5 Z';
  return pathIcon(`${teeth.join(' ')} Z ${ring}`, { viewBox: '0 0 24 24', fillRule: 'evenodd' });
}

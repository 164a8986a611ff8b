// The web client's languages (issue 36). Every text the page shows is an
// ICU MessageFormat message (messageformat.js) keyed by its English source,
// as gettext keys by its msgid: `t('Your move.')`, `t('{count, plural, one
// {# move} other {# moves}}', { count })`. English is the source itself;
// web/locales/{de,fr,es,ar}.json map each English message to its
// translation, and a message a catalog lacks is shown in English.
//
// The language is the one picked in the settings (remembered as
// `rookery:pref:lang`), else the first of the browser's languages
// (navigator.languages) the site speaks, else English. It is fixed for the
// page's life (the picker reloads the page), so modules may translate at
// load time: this module reads its catalog before any module that imports
// it runs (a top-level await). Arabic is written right to left: <html
// dir="rtl"> mirrors the page's layout, and style.css keeps the board, its
// coordinates and the graphs left to right. Dates and numbers are written
// the language's way (Intl). The API's error messages stay English: the
// page shows a known code in its own words, else the server's text.

import { formatMessage, parseMessage } from './messageformat.js';
import { getPreference, savePreference } from './storage.js';

export const LANGUAGES = [
  { code: 'en', name: 'English' },
  { code: 'de', name: 'Deutsch' },
  { code: 'fr', name: 'Français' },
  { code: 'es', name: 'Español' },
  { code: 'ar', name: 'العربية', dir: 'rtl' },
];

function picked() {
  const value = getPreference('lang');
  return LANGUAGES.some((entry) => entry.code === value) ? value : null;
}

// The first of the browser's languages the site has, by its primary tag
// (`de-AT` reads German).
export function browserLanguage(languages = navigator.languages || [navigator.language]) {
  for (const tag of languages || []) {
    const primary = String(tag).toLowerCase().split('-')[0];
    if (LANGUAGES.some((language) => language.code === primary)) return primary;
  }
  return 'en';
}

// The language chosen in the settings (null: the browser's).
export const pickedLanguage = picked();
export const language = pickedLanguage || browserLanguage();
export const direction = LANGUAGES.find((entry) => entry.code === language).dir || 'ltr';

// `code`, or null for the browser's; the page reloads to speak it.
export function pickLanguage(code) {
  savePreference('lang', code);
}

async function loadCatalog(code) {
  if (code === 'en') return {};
  try {
    const response = await fetch(`/locales/${code}.json`);
    return response.ok ? await response.json() : {};
  } catch {
    return {};
  }
}

const catalog = await loadCatalog(language);
document.documentElement.lang = language;
document.documentElement.dir = direction;

const parsed = new Map();

// The message `source` (its English text) in the page's language, with
// `args` put in. A translation that cannot be read falls back to English
// (the catalogs' test keeps that from happening).
export function t(source, args) {
  const key = String(source);
  if (!parsed.has(key)) {
    const translated = Object.hasOwn(catalog, key) ? catalog[key] : key;
    let message;
    try {
      message = parseMessage(translated);
    } catch {
      message = parseMessage(key);
    }
    parsed.set(key, message);
  }
  return formatMessage(parsed.get(key), args, language);
}

// Whether the page's catalog translates `source` (tests and the picker).
export const translates = (source) => language === 'en' || Object.hasOwn(catalog, source);

const numberFormat = new Intl.NumberFormat(language);
export const formatNumber = (value) => numberFormat.format(value);

// A moment (ms since the epoch) as a date, or a date and time, the
// language's way.
export function formatDate(ms, { time = false } = {}) {
  const options = time ? { dateStyle: 'medium', timeStyle: 'short' } : { dateStyle: 'medium' };
  return new Intl.DateTimeFormat(language, options).format(new Date(ms));
}

// The language picker of the settings panel (issue 36): the browser's
// language, or one of the site's, remembered (`rookery:pref:lang`, see
// i18n.js). The page reloads to speak the new one, every text at once.

import { h } from './dom.js';
import { LANGUAGES, browserLanguage, pickLanguage, pickedLanguage, t } from './i18n.js';

export function languageSetting() {
  const browser = LANGUAGES.find((entry) => entry.code === browserLanguage());
  const select = h('select', { id: 'language-select' },
    h('option', { value: '' }, t('The browser’s language ({name})', { name: browser.name })),
    // Each language by its own name, in its own direction.
    LANGUAGES.map((entry) => h('option', { value: entry.code, lang: entry.code, dir: entry.dir || 'ltr' }, entry.name)));
  select.value = pickedLanguage || '';
  select.addEventListener('change', () => {
    pickLanguage(select.value || null);
    window.location.reload();
  });
  return h('div', { class: 'language-setting' }, h('label', { for: 'language-select' }, t('Language')), select);
}

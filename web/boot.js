// The page's safety net while it loads. app.js is a module with some fifty
// imports; when one of them cannot be fetched (the network dropped or
// changed while the page loaded: Chromium then fails every request in
// flight), the browser never runs app.js and the page would say
// "Loading…" for ever. A failed module graph fires `error` at its <script>
// element; this classic script, run before it (index.html loads both
// deferred, in order), listens for that. The first failure reloads the
// page once by itself; a second within a minute says so, with a Reload
// button. It cannot use the modules (they are what failed), so it carries
// its own few words in the site's languages.
(function boot() {
  const RETRY_KEY = 'rookery:load-retry';
  const RETRY_WINDOW_MS = 60_000;
  const WORDS = {
    en: ['The page could not load: the connection was interrupted.', 'Reload'],
    de: ['Die Seite konnte nicht geladen werden: die Verbindung wurde unterbrochen.', 'Neu laden'],
    fr: ['La page n’a pas pu se charger : la connexion a été interrompue.', 'Recharger'],
    es: ['La página no pudo cargarse: la conexión se interrumpió.', 'Recargar'],
    ar: ['تعذّر تحميل الصفحة: انقطع الاتصال.', 'إعادة التحميل'],
  };

  // i18n.js's rule, which this script cannot import: the language picked
  // in the settings, else the first of the browser's the site speaks.
  function language() {
    let picked = null;
    try {
      picked = JSON.parse(window.localStorage.getItem('rookery:pref:lang') || 'null');
    } catch {
      picked = null;
    }
    const tags = picked ? [picked] : (navigator.languages || [navigator.language]);
    for (const tag of tags) {
      const primary = String(tag).toLowerCase().split('-')[0];
      if (WORDS[primary]) return primary;
    }
    return 'en';
  }

  function retriedLately() {
    try {
      const at = Number(window.sessionStorage.getItem(RETRY_KEY));
      return Number.isFinite(at) && Date.now() - at < RETRY_WINDOW_MS;
    } catch {
      return true;
    }
  }

  function failed() {
    if (!retriedLately()) {
      try {
        window.sessionStorage.setItem(RETRY_KEY, String(Date.now()));
        window.location.reload();
        return;
      } catch {
        // No session storage: say so instead of reloading for ever.
      }
    }
    const lang = language();
    const [sentence, button] = WORDS[lang];
    const show = () => {
      const main = document.getElementById('app');
      if (!main) return;
      const note = document.createElement('section');
      note.className = 'card narrow load-failed';
      note.setAttribute('role', 'alert');
      note.lang = lang;
      if (lang === 'ar') note.dir = 'rtl';
      const text = document.createElement('p');
      text.textContent = sentence;
      const reload = document.createElement('button');
      reload.type = 'button';
      reload.className = 'primary';
      reload.textContent = button;
      reload.addEventListener('click', () => window.location.reload());
      note.append(text, reload);
      main.replaceChildren(note);
    };
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', show);
    else show();
  }

  document.addEventListener('error', (event) => {
    const target = event.target;
    if (target instanceof HTMLScriptElement && target.type === 'module') failed();
  }, true);
}());

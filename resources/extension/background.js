// The service worker only lists the modules it runs; each one registers its own listeners.
// Chrome requires listeners to be registered synchronously on start, which importing does.
import './js/router.js';
import './js/menus.js';
import './js/tabwatch.js';

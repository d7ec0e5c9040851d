// Reads a tab's text on demand only (activeTab + scripting): after the person clicked the
// toolbar button or a context-menu item on that page, and after the app said the mode allows it.

import { BridgeError } from './bridge.js';
import { hostOf } from './pagekey.js';

const MAX_CHARS = 1_500_000; // the bridge takes bodies up to 2 MiB

function pageSnapshot() {
  return { url: location.href, title: document.title, text: document.body ? document.body.innerText : '' };
}

/** {url, title, text} of the tab, refused when the tab has since moved to another host. */
export async function readPageText(tabId, expectedHost) {
  let results;
  try {
    results = await chrome.scripting.executeScript({ target: { tabId }, func: pageSnapshot });
  } catch {
    throw new BridgeError(
      'no_access',
      'Chrome lets Vodou read a page only right after you ask on it: click the Vodou toolbar button '
      + '(or use the right-click menu) on this page, then try again.',
    );
  }
  const snapshot = results?.[0]?.result;
  if (!snapshot || hostOf(snapshot.url) !== expectedHost) {
    throw new BridgeError('no_page', 'The tab moved to another site; nothing was read.');
  }
  return { ...snapshot, text: snapshot.text.slice(0, MAX_CHARS) };
}

// Which tab "this page" means: the tab the person last activated, never one of our own pages
// (the side panel opened as a tab, for instance). Kept in session storage so a restarted worker
// still knows it.

const KEY = 'vodouFocusTab';
const OWN_ORIGIN = `chrome-extension://${chrome.runtime.id}/`;

export function isOwnPage(url) {
  return typeof url === 'string' && url.startsWith(OWN_ORIGIN);
}

export async function setFocusTab(tab) {
  if (!tab || isOwnPage(tab.url || tab.pendingUrl)) return;
  await chrome.storage.session.set({ [KEY]: tab.id });
}

export async function focusTabId() {
  const stored = await chrome.storage.session.get(KEY);
  return stored[KEY] ?? null;
}

/** The tab the person is looking at, or null. */
export async function focusTab() {
  const id = await focusTabId();
  if (id !== null) {
    try {
      return await chrome.tabs.get(id);
    } catch {
      // closed: fall back to the active tab below
    }
  }
  const [active] = await chrome.tabs.query({ active: true, lastFocusedWindow: true });
  return active && !isOwnPage(active.url) ? active : null;
}

// The last thing a context-menu action did, for the panel to say ("Saved the selection", or
// why not). Session storage only: gone when the browser closes.

const KEY = 'vodouLastOutcome';

export async function recordOutcome(ok, text) {
  await chrome.storage.session.set({ [KEY]: { ok, text, at: Date.now() } });
}

export async function lastOutcome() {
  const stored = await chrome.storage.session.get(KEY);
  return stored[KEY] || null;
}

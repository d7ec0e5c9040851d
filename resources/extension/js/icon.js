// Toolbar icon per tab, from the PNGs the app renders from its own artwork, the same as the tray:
// neutral, green (this page has memory: green with a white dot), dimmed (Vodou is off here: grey
// with a slash), paused (collection is paused: grey with a pause badge).

const SIZES = [16, 32, 48, 128];
const TITLES = {
  neutral: 'Vodou',
  green: 'Vodou: you saved memory from this page',
  dimmed: 'Vodou is off on this site',
  paused: 'Vodou is paused: it reads no page',
};

/** Last icon state per tab id: a read-only view for the panel and for tests. */
export const iconStates = new Map();

function iconPaths(state) {
  return Object.fromEntries(SIZES.map((size) => [size, `icons/${state}-${size}.png`]));
}

export async function showIcon(tabId, state, title = '') {
  iconStates.set(tabId, state);
  try {
    await chrome.action.setIcon({ tabId, path: iconPaths(state) });
    await chrome.action.setTitle({ tabId, title: title || TITLES[state] });
  } catch {
    iconStates.delete(tabId); // the tab closed meanwhile
  }
}

chrome.tabs.onRemoved.addListener((tabId) => iconStates.delete(tabId));

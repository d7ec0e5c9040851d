// Follows the active tab: asks the mode first, then (only when not off) reports the page to the
// app so the tray follows the browser, and colours the toolbar icon from the cached probe.
// The toolbar button opens the side panel (and that click lets Vodou read the page on demand).

import { call, BridgeError } from './bridge.js';
import { focusTab, isOwnPage, setFocusTab } from './focus.js';
import { showIcon } from './icon.js';
import { hostOf } from './pagekey.js';
import { probes } from './probe.js';
import { resolveMode } from './sitemode.js';

let lastReported = '';

async function reportActivePage(tab) {
  const report = `${tab.url}\n${tab.title || ''}`;
  if (report === lastReported) return;
  lastReported = report;
  try {
    await call('POST', '/api/active-page', { url: tab.url, title: tab.title || '' });
  } catch (error) {
    lastReported = '';
    throw error;
  }
}

/** An off site: only its host (already sent to ask the mode), so the tray dims like the toolbar. */
async function reportOffSite(host) {
  const report = `off:${host}`;
  if (report === lastReported) return;
  lastReported = report;
  try {
    await call('POST', '/api/active-page', { offHost: host });
  } catch {
    lastReported = ''; // the tray keeps its last state; the toolbar is already right
  }
}

async function refresh(tab) {
  const resolution = await resolveMode(tab.url);
  if (resolution.mode === 'off') {
    const paused = resolution.reason === 'paused';
    await showIcon(tab.id, paused ? 'paused' : 'dimmed',
      paused ? 'Vodou is paused: it reads no page' : `Vodou is off on ${resolution.host} (${resolution.reason})`);
    await reportOffSite(resolution.host);
    return;
  }
  await reportActivePage(tab);
  const state = await probes.stateFor(tab.url);
  await showIcon(tab.id, state === 'green' ? 'green' : 'neutral');
}

/** Re-check one tab: mode, report, icon. Failures leave a neutral icon whose title says why. */
export async function refreshTab(tab) {
  if (!tab || isOwnPage(tab.url)) return;
  if (!hostOf(tab.url)) {
    await showIcon(tab.id, 'neutral');
    return;
  }
  try {
    await refresh(tab);
  } catch (error) {
    const why = error instanceof BridgeError ? error.message : String(error);
    await showIcon(tab.id, 'neutral', `Vodou: ${why}`);
  }
}

export async function refreshFocus() {
  await refreshTab(await focusTab());
}

chrome.tabs.onActivated.addListener(async ({ tabId }) => {
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (!tab || isOwnPage(tab.url || tab.pendingUrl)) return;
  await setFocusTab(tab);
  await refreshTab(tab);
});

chrome.tabs.onUpdated.addListener(async (tabId, change, tab) => {
  if (!tab.active || isOwnPage(tab.url)) return;
  if (change.status !== 'complete' && change.title === undefined) return;
  await setFocusTab(tab);
  await refreshTab(tab);
});

chrome.windows.onFocusChanged.addListener(async (windowId) => {
  if (windowId === chrome.windows.WINDOW_ID_NONE) return;
  const [tab] = await chrome.tabs.query({ active: true, windowId });
  if (!tab || isOwnPage(tab.url)) return;
  await setFocusTab(tab);
  await refreshTab(tab);
});

chrome.action.onClicked.addListener((tab) => {
  // Must run inside the click: opening the panel needs the user gesture.
  chrome.sidePanel.open({ windowId: tab.windowId }).catch(() => {});
  setFocusTab(tab).then(() => refreshTab(tab));
});

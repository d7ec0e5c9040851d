// Context-menu items. A menu click is a user gesture on that page, so Chrome lets the
// extension read it (activeTab); the mode check still comes first.

import { BridgeError } from './bridge.js';
import { recordOutcome } from './outcome.js';
import { addToLibrary, sendSelection } from './pageactions.js';

export const MENU = {
  selection: 'vodou-send-selection',
  library: 'vodou-add-to-library',
};

chrome.runtime.onInstalled.addListener(() => {
  chrome.contextMenus.removeAll(() => {
    chrome.contextMenus.create({ id: MENU.selection, title: 'Send selection to Vodou memory', contexts: ['selection'] });
    chrome.contextMenus.create({ id: MENU.library, title: 'Add this page to Vodou Library', contexts: ['page'] });
  });
});

const ACTIONS = {
  [MENU.selection]: async (info, tab) => {
    await sendSelection(tab, info.selectionText || '');
    return 'Saved the selection to Vodou memory, with this page\'s address and title.';
  },
  [MENU.library]: async (info, tab) => {
    await addToLibrary(tab);
    return 'Added this page to your Vodou Library.';
  },
};

/** Runs one menu action and records what happened for the panel. */
export async function runMenuItem(info, tab) {
  const action = ACTIONS[info.menuItemId];
  if (!action || !tab) return;
  try {
    await recordOutcome(true, await action(info, tab));
  } catch (error) {
    await recordOutcome(false, error instanceof BridgeError ? error.message : String(error));
  }
}

chrome.contextMenus.onClicked.addListener((info, tab) => {
  runMenuItem(info, tab);
});

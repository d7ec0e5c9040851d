// The one action -> handler map for messages from the side panel. Every handler returns plain
// JSON; errors travel as {kind, message} so the panel can say what to do.

import { appStatus, call, BridgeError } from './bridge.js';
import { focusTab } from './focus.js';
import { iconStates } from './icon.js';
import { lastOutcome } from './outcome.js';
import { addToLibrary, matchPage, readForTurn, saveNote, sendTurn, suggestFor } from './pageactions.js';
import { completePairing, setPort, startPairing, unpair } from './pairing.js';
import { probes } from './probe.js';
import { askForMode } from './sitemode.js';
import { rememberProject } from './siteproject.js';
import { refreshTab } from './tabwatch.js';

async function requireTab() {
  const tab = await focusTab();
  if (!tab) throw new BridgeError('no_page', 'Open a web page in a tab first.');
  return tab;
}

function pageOf(tab) {
  return tab ? { tabId: tab.id, url: tab.url, title: tab.title || '' } : null;
}

/** Everything the panel shows about the current page, in the order the rules demand. */
async function pageState() {
  const status = await appStatus();
  const tab = await focusTab();
  if (!status.paired || !tab) return { status, page: pageOf(tab), match: null };
  return { status, page: pageOf(tab), match: await matchPage(tab) };
}

async function changeMode({ host, mode }) {
  const resolution = await askForMode(host, mode);
  probes.clear();
  await refreshTab(await focusTab());
  return resolution;
}

export const HANDLERS = {
  status: () => appStatus(),
  pairStart: () => startPairing(),
  pairComplete: ({ code }) => completePairing(code),
  unpair: () => unpair(),
  setPort: ({ port }) => setPort(port),
  pageState: () => pageState(),
  setSiteMode: (message) => changeMode(message),
  setProject: async ({ project }) => rememberProject((await requireTab()).url, project || ''),
  saveNote: async ({ text }) => saveNote(await requireTab(), text),
  readForTurn: async () => readForTurn(await requireTab()),
  sendTurn: async ({ content, pageContext }) => sendTurn(await requireTab(), content, pageContext),
  suggest: async ({ prefix }) => suggestFor(await requireTab(), prefix),
  addToLibrary: async () => addToLibrary(await requireTab()),
  approvals: () => call('GET', '/api/approvals'),
  decideApproval: ({ id, decision }) => call('POST', `/api/approvals/${encodeURIComponent(id)}`, { decision }),
  forgetDryRun: ({ host }) => call('POST', '/api/forget/dry-run', { host }),
  forgetConfirm: async ({ token }) => {
    const done = await call('POST', '/api/forget/confirm', { token });
    probes.clear();
    return done;
  },
  forgetUndo: async ({ op }) => {
    const done = await call('POST', '/api/forget/undo', { op });
    probes.clear();
    return done;
  },
  lastOutcome: () => lastOutcome(),
  iconState: async () => {
    const tab = await focusTab();
    return { tabId: tab?.id ?? null, state: tab ? iconStates.get(tab.id) || 'neutral' : null };
  },
};

// Everything the extension does with a page. Each action first asks the app for the host's mode
// (requireMode / resolveMode) and sends nothing about the page before that answer.

import { call } from './bridge.js';
import { MAY_READ_PAGE, MAY_WRITE } from './config.js';
import { readPageText } from './pagetext.js';
import { probes } from './probe.js';
import { requireMode, resolveMode } from './sitemode.js';
import { refreshTab } from './tabwatch.js';

function titleOf(tab) {
  return (tab.title || '').trim() || tab.url;
}

async function afterWrite(tab) {
  probes.forget(tab.url);
  await refreshTab(tab);
}

/** "From this page": facts, documents (each once) and, with pageContext, related memories. */
export async function matchPage(tab, pageContext = '') {
  const resolution = await resolveMode(tab.url);
  if (!resolution) return { resolution: null, facts: [], documents: [], related: [] };
  if (resolution.mode === 'off') return { resolution, facts: [], documents: [], related: [] };
  const body = { url: tab.url, title: titleOf(tab) };
  if (pageContext) body.pageContext = pageContext;
  const match = await call('POST', '/api/page-match/match', body);
  return { resolution, facts: match.facts || [], documents: match.documents || [], related: match.related || [] };
}

/** Context menu "Send selection to Vodou memory": the selection with the tab's URL and title. */
export async function sendSelection(tab, text) {
  await requireMode(tab.url, MAY_WRITE, 'sending the selection');
  const saved = await call('POST', '/api/selection', { url: tab.url, title: titleOf(tab), text });
  await afterWrite(tab);
  return saved;
}

/** "Add this page to Vodou Library": reads the page text now, only under collect. */
export async function addToLibrary(tab) {
  const resolution = await requireMode(tab.url, MAY_WRITE, 'adding the page to the Library');
  const page = await readPageText(tab.id, resolution.host);
  const saved = await call('POST', '/api/library', { url: tab.url, title: page.title || titleOf(tab), text: page.text });
  await afterWrite(tab);
  return saved;
}

export async function saveNote(tab, text) {
  await requireMode(tab.url, MAY_WRITE, 'saving a note for this page');
  const saved = await call('POST', '/api/notes', { url: tab.url, title: titleOf(tab), text });
  await afterWrite(tab);
  return saved;
}

/** "Use": the page text for one turn. Returned to the panel, kept nowhere by the extension. */
export async function readForTurn(tab) {
  const resolution = await requireMode(tab.url, MAY_READ_PAGE, 'reading the page');
  const page = await readPageText(tab.id, resolution.host);
  return { url: tab.url, title: page.title || titleOf(tab), text: page.text };
}

/** One turn: `content` is what the person typed; `pageContext` serves this turn only. */
export async function sendTurn(tab, content, pageContext) {
  await requireMode(tab.url, MAY_READ_PAGE, 'using the page');
  const turn = await call('POST', '/api/turns', { content, pageContext, url: tab.url, title: titleOf(tab) });
  await afterWrite(tab);
  return turn;
}

export async function suggestFor(tab, prefix) {
  await requireMode(tab.url, MAY_READ_PAGE, 'suggestions');
  return call('POST', '/api/page-match/suggest', { url: tab.url, prefix });
}

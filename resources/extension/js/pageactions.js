// Everything the extension does with a page. Each action first asks the app for the host's mode
// (requireMode / resolveMode) and sends nothing about the page before that answer.

import { call } from './bridge.js';
import { MAY_READ_PAGE, MAY_WRITE } from './config.js';
import { readPageText } from './pagetext.js';
import { probes } from './probe.js';
import { projectFor, withProject } from './siteproject.js';
import { requireMode, resolveMode } from './sitemode.js';
import { refreshTab } from './tabwatch.js';

function titleOf(tab) {
  return (tab.title || '').trim() || tab.url;
}

async function afterWrite(tab) {
  probes.forget(tab.url);
  await refreshTab(tab);
}

/** "From this page": facts and documents (each once, every project, each with its project) and,
 * with pageContext, related memories of the chosen project. Nothing is asked on an off site. */
export async function matchPage(tab, pageContext = '') {
  const empty = { facts: [], documents: [], related: [], projects: [], project: '' };
  const resolution = await resolveMode(tab.url);
  if (!resolution) return { resolution: null, ...empty };
  if (resolution.mode === 'off') return { resolution, ...empty };
  const project = await projectFor(tab.url);
  const body = withProject({ url: tab.url, title: titleOf(tab) }, project);
  if (pageContext) body.pageContext = pageContext;
  const match = await call('POST', '/api/page-match/match', body);
  return { resolution, facts: match.facts || [], documents: match.documents || [], related: match.related || [],
    projects: match.projects || [], project };
}

/** Context menu "Send selection to Vodou memory": the selection with the tab's URL and title. */
export async function sendSelection(tab, text) {
  await requireMode(tab.url, MAY_WRITE, 'sending the selection');
  const saved = await call('POST', '/api/selection',
    withProject({ url: tab.url, title: titleOf(tab), text }, await projectFor(tab.url)));
  await afterWrite(tab);
  return saved;
}

/** "Add this page to Vodou Library": reads the page text now, only under collect. */
export async function addToLibrary(tab) {
  const resolution = await requireMode(tab.url, MAY_WRITE, 'adding the page to the Library');
  const page = await readPageText(tab.id, resolution.host);
  const saved = await call('POST', '/api/library',
    withProject({ url: tab.url, title: page.title || titleOf(tab), text: page.text }, await projectFor(tab.url)));
  await afterWrite(tab);
  return saved;
}

export async function saveNote(tab, text) {
  await requireMode(tab.url, MAY_WRITE, 'saving a note for this page');
  const saved = await call('POST', '/api/notes',
    withProject({ url: tab.url, title: titleOf(tab), text }, await projectFor(tab.url)));
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
  const turn = await call('POST', '/api/turns',
    withProject({ content, pageContext, url: tab.url, title: titleOf(tab) }, await projectFor(tab.url)));
  await afterWrite(tab);
  return turn;
}

export async function suggestFor(tab, prefix) {
  await requireMode(tab.url, MAY_READ_PAGE, 'suggestions');
  return call('POST', '/api/page-match/suggest', withProject({ url: tab.url, prefix }, await projectFor(tab.url)));
}

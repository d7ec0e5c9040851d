// The project chosen in the side panel, remembered per site (chrome.storage.local). It scopes the
// related-memory matches and the project of new notes, selections, Library pages and turns.
// "From this page" always lists every project: the probe counts them all.

import { hostOf } from './pagekey.js';

const KEY = 'vodouSiteProjects'; // {host: project name}

async function all() {
  const stored = await chrome.storage.local.get(KEY);
  return stored[KEY] || {};
}

/** The project remembered for a tab URL's site; '' when none (global memories only). */
export async function projectFor(url) {
  const host = hostOf(url);
  return host ? (await all())[host] || '' : '';
}

export async function rememberProject(url, project) {
  const host = hostOf(url);
  if (!host) return;
  const projects = await all();
  if (project) projects[host] = project;
  else delete projects[host];
  await chrome.storage.local.set({ [KEY]: projects });
}

/** Add `project` to a request body when one is chosen (the bridge treats no project as global). */
export function withProject(body, project) {
  return project ? { ...body, project } : body;
}
